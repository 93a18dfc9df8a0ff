import EmbeddedPostgres
import Foundation
import HabitSyncAuth
import HabitSyncStore
import LibPQClient
import Logging
import Migrations

/// The database (its own cluster, or DATABASE_URL), the schema, a tenant, and a release
/// server process, for one benchmark run.
final class BenchEnvironment {
    let connectionString: String
    let pool: PGPool
    let tenant: UUID
    let key: TenantKey
    let server: Process
    let baseURL: String
    private let cluster: EmbeddedPostgres?
    private let workDirectory: URL

    static let logger: Logger = {
        var logger = Logger(label: "habitsync-bench")
        logger.logLevel = .warning
        return logger
    }()

    init(databaseURL: String?, serverBinary: String, migrationsDirectory: String) async throws {
        workDirectory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("habitsync-bench-\(getpid())")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        if let databaseURL {
            connectionString = databaseURL
            cluster = nil
        } else {
            let cluster = try EmbeddedPostgres(configuration: .init(directory: workDirectory.appendingPathComponent("postgres"), databaseName: "habitsync", maxConnections: 200), logger: Self.logger)
            connectionString = try cluster.start().connectionString
            self.cluster = cluster
        }
        pool = PGPool(configuration: .init(connection: .init(connectionString: connectionString, applicationName: "habitsync-bench"), maximumConnections: 20), logger: Self.logger)
        try await MigrationRunner(pool: pool, directory: try MigrationDirectory(url: URL(fileURLWithPath: migrationsDirectory)), logger: Self.logger).up()
        key = TenantKey.generatedSecret()
        tenant = try await TenantStore(pool: pool).create(name: "bench-\(UUID().uuidString.prefix(8))", key: key).id

        let logFile = workDirectory.appendingPathComponent("server.log")
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        server = Process()
        server.executableURL = URL(fileURLWithPath: serverBinary)
        server.arguments = ["serve", "--port", "0", "--database-url", connectionString, "--migrate", "off", "--pool-size", "20",
                            "--log-format", "json", "--log-level", "info", "--statement-timeout", "60s"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = try FileHandle(forWritingTo: logFile)
        try server.run()
        var port: Int?
        for _ in 0..<300 where port == nil {
            try await Task.sleep(for: .milliseconds(100))
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") where line.contains("\"msg\":\"serving\"") {
                port = ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["port"].flatMap { Int("\($0)") }
            }
        }
        guard let port else { throw BenchError("the server did not start; see \(logFile.path)") }
        baseURL = "http://127.0.0.1:\(port)"
        // Request logs would cost the server time the raw ceiling does not pay: keep them, but
        // they go to a file, as in production.
    }

    func token(user: String) async throws -> String {
        try await TokenMinter.mint(tenantID: tenant, userID: user, key: key, ttl: 7200)
    }

    /// The server's peak resident set size (VmHWM), in MiB.
    func serverPeakRSS() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(server.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    func stop() async {
        server.terminate()
        server.waitUntilExit()
        pool.close()
        await pool.shutdownThreads()
        cluster?.stop()
        try? FileManager.default.removeItem(at: workDirectory)
    }
}
