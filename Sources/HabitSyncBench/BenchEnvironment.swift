import Foundation
import ServerHarness

/// The database (its own cluster, or DATABASE_URL), the schema, a tenant, and a release
/// server process, for one benchmark run.
final class BenchEnvironment {
    let database: HarnessDatabase
    let server: ServerProcess
    let serverBinary: String
    let migrationsDirectory: String
    private let workDirectory: URL
    private let removeWorkDirectory: UUID

    init(databaseURL: String?, serverBinary: String, migrationsDirectory: String) async throws {
        self.serverBinary = serverBinary
        self.migrationsDirectory = migrationsDirectory
        workDirectory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("habitsync-bench-\(getpid())")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        // Registered first, so an interrupted run removes the folder after stopping what is in it.
        let directory = workDirectory
        removeWorkDirectory = HarnessCleanup.shared.register { try? FileManager.default.removeItem(at: directory) }
        database = try await HarnessDatabase(databaseURL: databaseURL, directory: workDirectory, migrationsDirectory: URL(fileURLWithPath: migrationsDirectory), durable: true)
        // Request logs go to a file, as in production: the server pays for them, the raw
        // ceiling does not, and that is part of what is measured.
        // Webhooks may be delivered to the bench's sink on loopback (`WebhookCost`).
        server = Self.serverProcess(
            name: "server", binary: serverBinary, database: database, logDirectory: workDirectory, migrationsDirectory: migrationsDirectory,
            environment: ["HABITSYNC_WEBHOOK_LOOPBACK_HTTP=allow"])
        try await server.start()
    }

    /// `environment`: `NAME=value` pairs the process gets besides this one's (`OTEL_*`).
    static func serverProcess(
        name: String, binary: String, database: HarnessDatabase, logDirectory: URL, migrationsDirectory: String, environment: [String] = []
    ) -> ServerProcess {
        ServerProcess(
            binary: URL(fileURLWithPath: binary), databaseURL: database.connectionString, logDirectory: logDirectory, name: name,
            // The migrations folder as the benchmark was given it, made absolute: the server's
            // own default would look in its working directory.
            extraArguments: [
                "--migrate", "off", "--pool-size", "20", "--log-level", "info", "--statement-timeout", "60s",
                "--migrations-dir", URL(fileURLWithPath: migrationsDirectory).standardizedFileURL.path,
            ],
            launcher: environment.isEmpty ? [] : ["/usr/bin/env"] + environment)
    }

    /// Another replica on the same database (the realtime measurement, a traced server),
    /// started; the caller stops it.
    func startReplica(name: String, environment: [String] = []) async throws -> ServerProcess {
        let replica = Self.serverProcess(
            name: name, binary: serverBinary, database: database, logDirectory: workDirectory, migrationsDirectory: migrationsDirectory,
            environment: environment)
        try await replica.start()
        return replica
    }

    var baseURL: String { server.baseURL }

    func client(user: String, device: String) async throws -> DeviceClient {
        DeviceClient(baseURL: baseURL, token: try await database.token(user: user), device: device)
    }

    func puller(user: String) async throws -> Puller {
        try Puller(port: server.port, token: try await database.token(user: user))
    }

    func stop() async {
        await server.stop()
        await database.close()
        try? FileManager.default.removeItem(at: workDirectory)
        HarnessCleanup.shared.unregister(removeWorkDirectory)
    }
}
