import Foundation

/// The installed PostgreSQL server binaries (`initdb`, `pg_ctl`, `createdb`).
public struct PostgresBinaries: Sendable {
    public let directory: URL

    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Finds them: `$HABITSYNC_PG_BINDIR`, then the newest `/usr/lib/postgresql/*/bin`
    /// (Debian, Ubuntu), then `$PATH`.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresBinaries {
        let fileManager = FileManager.default
        func hasServer(_ directory: String) -> Bool {
            fileManager.isExecutableFile(atPath: directory + "/initdb") && fileManager.isExecutableFile(atPath: directory + "/pg_ctl")
        }
        var searched: [String] = []
        if let configured = environment["HABITSYNC_PG_BINDIR"], !configured.isEmpty {
            if hasServer(configured) { return PostgresBinaries(directory: URL(fileURLWithPath: configured)) }
            throw EmbeddedPostgresError("HABITSYNC_PG_BINDIR=\(configured) holds no initdb and pg_ctl")
        }
        let debianRoot = "/usr/lib/postgresql"
        let versions = ((try? fileManager.contentsOfDirectory(atPath: debianRoot)) ?? [])
            .compactMap { Int($0) }
            .sorted(by: >)
        for version in versions {
            let directory = "\(debianRoot)/\(version)/bin"
            searched.append(directory)
            if hasServer(directory) { return PostgresBinaries(directory: URL(fileURLWithPath: directory)) }
        }
        for directory in (environment["PATH"] ?? "").split(separator: ":").map(String.init) {
            searched.append(directory)
            if hasServer(directory) { return PostgresBinaries(directory: URL(fileURLWithPath: directory)) }
        }
        throw EmbeddedPostgresError(
            """
            DATABASE_URL is not set and no PostgreSQL server binaries (initdb, pg_ctl) were found \
            for the embedded database. Install them (Debian/Ubuntu: apt-get install -y postgresql), \
            point HABITSYNC_PG_BINDIR at their folder, or set DATABASE_URL to an existing server.
            """)
    }
}
