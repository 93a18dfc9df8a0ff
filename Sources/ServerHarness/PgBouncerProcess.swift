import Foundation
import LibPQClient

#if canImport(Glibc)
    import Glibc
#endif

/// A PgBouncer in transaction mode in front of a cluster of ours, started from the installed
/// package (`scripts/install-dependencies` installs it): every database, a small server pool
/// per database and user, so clients really share server connections. For the test suite and
/// the fault suite.
public final class PgBouncerProcess: Sendable {
    public struct NotInstalled: Error, CustomStringConvertible {
        public var description: String { "pgbouncer is not installed (scripts/install-dependencies installs it with apt): the PgBouncer tests cannot run" }
    }

    public let port: Int
    /// The binary's version, e.g. (1, 18).
    public let version: (major: Int, minor: Int)
    private let process: SpawnedChild
    private let directory: URL
    private let user: String
    private let password: String

    /// `HABITSYNC_PGBOUNCER` when set (another build, e.g. one ≥ 1.21 to test prepared
    /// statements through it), else the installed package's.
    public static var binary: String? {
        if let chosen = ProcessInfo.processInfo.environment["HABITSYNC_PGBOUNCER"], !chosen.isEmpty { return chosen }
        return ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// From 1.21 PgBouncer keeps track of protocol-level named prepared statements itself
    /// (`max_prepared_statements`), so the server's named statements work through it.
    public var tracksPreparedStatements: Bool { Self.tracksPreparedStatements(version) }

    static func tracksPreparedStatements(_ version: (major: Int, minor: Int)) -> Bool { version >= (1, 21) }

    /// `pgbouncer --version` prints `PgBouncer 1.18.0` first.
    static func version(of binary: String) async throws -> (major: Int, minor: Int) {
        let output = try CapturedOutput()
        // Not Foundation's `Process`, whose `run()` crashes now and then (`SpawnedChild`).
        let child = try SpawnedChild.spawn(
            URL(fileURLWithPath: binary), ["--version"], environment: ProcessInfo.processInfo.environment, output: .file(output.url))
        await child.exited()
        let text = output.text()
        let numbers = text.split(separator: "\n").first?.split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
        guard numbers.count >= 2 else { throw HarnessError("\(binary) --version printed no version: \(text.prefix(200))") }
        return (numbers[0], numbers[1])
    }

    /// - Parameter poolSize: server connections per database and user.
    /// - Parameter queryWaitSeconds: how long a client may wait for a server connection
    ///   before PgBouncer fails its query. Short by default, so a PostgreSQL outage fails fast
    ///   (the fault suite's pooled scenarios); long for the test suite, where it is only ever
    ///   busy, never down.
    public static func start(postgresPort: Int, user: String, password: String, poolSize: Int, queryWaitSeconds: Int = 5) async throws -> PgBouncerProcess {
        guard let binary else { throw NotInstalled() }
        let version = try await Self.version(of: binary)
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("habitsync-pgbouncer-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try freeLoopbackPort()
        let config = """
            [databases]
            * = host=127.0.0.1 port=\(postgresPort)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = scram-sha-256
            auth_file = \(directory.path)/userlist.txt
            pool_mode = transaction
            default_pool_size = \(poolSize)
            max_client_conn = 4000
            server_reset_query =
            ; PostgreSQL gone: fail queued queries after 5 s (by default) and retry the server every
            ; second, so clients get an error (the server answers 503) rather than waiting minutes.
            query_wait_timeout = \(queryWaitSeconds)
            server_login_retry = 1
            server_connect_timeout = 5
            ignore_startup_parameters = extra_float_digits,options
            logfile = \(directory.path)/pgbouncer.log
            """ + (tracksPreparedStatements(version) ? "\nmax_prepared_statements = 200" : "")
        try config.write(to: directory.appendingPathComponent("pgbouncer.ini"), atomically: true, encoding: .utf8)
        try "\"\(user)\" \"\(password)\"\n".write(to: directory.appendingPathComponent("userlist.txt"), atomically: true, encoding: .utf8)
        if getuid() == 0 {
            for file in ["", "pgbouncer.ini", "userlist.txt"] {
                chmod(directory.appendingPathComponent(file).path, file.isEmpty ? 0o777 : 0o644)
            }
        }
        // PgBouncer refuses to run as root; the postgres user can read the folder (mode 755).
        let process = try SpawnedChild.spawn(
            URL(fileURLWithPath: binary), (getuid() == 0 ? ["-u", "postgres"] : []) + [directory.appendingPathComponent("pgbouncer.ini").path],
            environment: ProcessInfo.processInfo.environment)
        let bouncer = PgBouncerProcess(port: port, version: version, process: process, directory: directory, user: user, password: password)
        // Ready when a client gets through to PostgreSQL (bounded by a count of attempts).
        for attempt in 0..<600 {
            do {
                try await PGPool.withPool(
                    .init(
                        connection: .init(
                            connectionString: bouncer.connectionString(database: "postgres"), transactionPooling: true,
                            namedPreparedStatements: false), maximumConnections: 1), logger: HarnessDatabase.logger
                ) { pool in
                    try await pool.withConnection { _ = try await $0.query("SELECT 1") }
                }
                return bouncer
            } catch  where attempt < 599 && process.isRunning {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        throw HarnessError("pgbouncer did not start: \((try? String(contentsOf: directory.appendingPathComponent("pgbouncer.log"), encoding: .utf8)) ?? "")")
    }

    private init(port: Int, version: (major: Int, minor: Int), process: SpawnedChild, directory: URL, user: String, password: String) {
        self.port = port
        self.version = version
        self.process = process
        self.directory = directory
        self.user = user
        self.password = password
    }

    public func connectionString(database: String) -> String {
        "host=127.0.0.1 port=\(port) user=\(user) password=\(password) dbname='\(database)' \(HarnessConnectTimeout.keyword)"
    }

    /// Kills it at once. Called at exit too, where a wait would spin.
    public func stop() {
        process.send(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}
