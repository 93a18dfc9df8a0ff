import ArgumentParser
import EmbeddedPostgres
import Foundation
import HabitSyncServer

/// `habitsync-server embedded list | stop | remove`: the embedded databases on this machine,
/// which outlive a checkout when they were relocated to the system folder, and can outlive
/// the process that started them when it was killed.
struct EmbeddedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "embedded",
        abstract: "List, stop or remove the embedded databases (used when no DATABASE_URL is set).",
        subcommands: [List.self, Stop.self, Remove.self])

    /// The cluster a command names: its folder argument, or the one the options name.
    static func cluster(_ folder: String?, _ common: CommonOptions) -> URL {
        folder.map { URL(fileURLWithPath: $0).standardizedFileURL } ?? common.embeddedDirectories().cluster
    }

    /// How `list` describes who uses a running cluster.
    static func describe(_ use: EmbeddedPostgres.Use) -> String {
        switch use {
        case .keptBy(let keeper): "kept by process \(keeper.pid)"
        case .orphaned: "orphaned: left running by a process that is gone (`embedded stop` stops it)"
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the embedded databases: the one these options name, and every one in \(EmbeddedPostgres.systemRoot.path).",
            discussion: "One line each: its folder, whether it runs (and on which port), the data directory it serves, its password file.")

        @OptionGroup var common: CommonOptions
        @Flag(help: "Print one JSON object per database.") var json = false

        func run() async throws {
            // Resolved first: a bad --log-level is refused even when there is nothing to list.
            let logger = try common.makeLogger()
            let (requested, own) = common.embeddedDirectories()
            var clusters = EmbeddedPostgres.relocatedClusters()
            if EmbeddedPostgres.isCluster(own), !clusters.contains(own) { clusters.insert(own, at: 0) }
            if clusters.isEmpty {
                StandardError.write("no embedded database (this command's would be \(requested.path))\n")
            }
            for cluster in clusters {
                let port = EmbeddedPostgres.runningPort(ofCluster: cluster)
                let serves = cluster == own ? requested.path : (EmbeddedPostgres.requestedDirectory(of: cluster) ?? "unknown (made before this was recorded)")
                let password = cluster.appendingPathComponent("superuser.password").path
                let use = try port.map { _ in try EmbeddedPostgres(configuration: .init(directory: cluster), logger: logger).use() }
                if json {
                    var object: [String: Any] = ["directory": cluster.path, "running": port != nil, "serves": serves, "passwordFile": password]
                    if let port { object["port"] = port }
                    switch use {
                    case .keptBy(let keeper): object["keeperPid"] = Int(keeper.pid)
                    case .orphaned: object["orphaned"] = true
                    case nil: break
                    }
                    try JSONLine.print(object)
                } else {
                    let state = port.map { "running on port \($0) (\(use.map(EmbeddedCommand.describe) ?? ""))" } ?? "stopped"
                    print("\(cluster.path)  \(state)  for \(serves)  password \(password)")
                }
            }
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop a running embedded database that nobody uses any more.",
            discussion: """
                Without a folder, the one these options name (--data-dir, HABITSYNC_DATA_DIR, or the default); with one,
                that cluster (a folder `embedded list` printed). A database left running by a process that is gone (a
                server killed or crashed) is stopped; one a live process keeps only with --force, which disconnects
                its sessions.
                """)

        @OptionGroup var common: CommonOptions
        @Argument(help: ArgumentHelp("A cluster's folder, as `embedded list` prints it.", valueName: "folder")) var folder: String?
        @Flag(help: "Stop it even while a live process keeps it (its sessions are disconnected).") var force = false

        func run() async throws {
            let target = EmbeddedCommand.cluster(folder, common)
            let wasRunning: Bool
            do {
                wasRunning = try EmbeddedPostgres(configuration: .init(directory: target), logger: common.makeLogger())
                    .stopUnlessKept(force: force, outcome: "it was not stopped")
            } catch let error as EmbeddedPostgresError {
                throw CLIFailure(message: error.message)
            }
            print(wasRunning ? "stopped \(target.path)" : "\(target.path) is not running")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an embedded database and everything in it.",
            discussion: """
                Without a folder, the one these options name (--data-dir, HABITSYNC_DATA_DIR, or the default); with one,
                that cluster (a folder `embedded list` printed). One left running by a process that is gone is stopped
                first. Refuses a folder that is not an embedded database, and one a live process keeps.
                """)

        @OptionGroup var common: CommonOptions
        @Argument(help: ArgumentHelp("A cluster's folder, as `embedded list` prints it.", valueName: "folder")) var folder: String?

        func run() async throws {
            let target = EmbeddedCommand.cluster(folder, common)
            let stopped: Bool
            do {
                stopped = try EmbeddedPostgres(configuration: .init(directory: target), logger: common.makeLogger()).remove()
            } catch let error as EmbeddedPostgresError {
                throw CLIFailure(message: error.message)
            }
            print("\(stopped ? "stopped and " : "")removed \(target.path)")
        }
    }
}
