import ArgumentParser
import EmbeddedPostgres
import Foundation

/// `habitsync-server embedded list | remove`: the embedded databases on this machine, which
/// outlive a checkout when they were relocated to the system folder.
struct EmbeddedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "embedded",
        abstract: "List or remove the embedded databases (used when no DATABASE_URL is set).",
        subcommands: [List.self, Remove.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the embedded databases: the one these options name, and every one in \(EmbeddedPostgres.systemRoot.path).",
            discussion: "One line each: its folder, whether it runs (and on which port), the data directory it serves, its password file.")

        @OptionGroup var common: CommonOptions
        @Flag(help: "Print one JSON object per database.") var json = false

        func run() async throws {
            let (requested, own) = common.embeddedDirectories()
            var clusters = EmbeddedPostgres.relocatedClusters()
            if EmbeddedPostgres.isCluster(own), !clusters.contains(own) { clusters.insert(own, at: 0) }
            if clusters.isEmpty {
                FileHandle.standardError.write(Data("no embedded database (this command's would be \(requested.path))\n".utf8))
            }
            for cluster in clusters {
                let port = EmbeddedPostgres.runningPort(ofCluster: cluster)
                let serves = cluster == own ? requested.path : (EmbeddedPostgres.requestedDirectory(of: cluster) ?? "unknown (made before this was recorded)")
                let password = cluster.appendingPathComponent("superuser.password").path
                if json {
                    var object: [String: Any] = ["directory": cluster.path, "running": port != nil, "serves": serves, "passwordFile": password]
                    if let port { object["port"] = port }
                    try JSONLine.print(object)
                } else {
                    print("\(cluster.path)  \(port.map { "running on port \($0)" } ?? "stopped")  for \(serves)  password \(password)")
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a stopped embedded database and everything in it.",
            discussion: """
                Without a folder, the one these options name (--data-dir, HABITSYNC_DATA_DIR, or the default); with one,
                that cluster (a folder `embedded list` printed). Refuses a folder that is not an embedded database and
                one that is running.
                """)

        @OptionGroup var common: CommonOptions
        @Argument(help: ArgumentHelp("A cluster's folder, as `embedded list` prints it.", valueName: "folder")) var folder: String?

        func run() async throws {
            let target = folder.map { URL(fileURLWithPath: $0).standardizedFileURL } ?? common.embeddedDirectories().cluster
            do {
                try EmbeddedPostgres.remove(target)
            } catch let error as EmbeddedPostgresError {
                throw CLIFailure(message: error.message)
            }
            print("removed \(target.path)")
        }
    }
}
