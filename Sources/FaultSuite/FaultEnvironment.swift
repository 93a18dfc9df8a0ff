import Foundation
import ServerHarness

/// One scenario's world: a PostgreSQL cluster of its own (the outage stops it) or a given
/// database, migrated, with a tenant, and the server binary to run against it.
final class FaultEnvironment {
    let database: HarnessDatabase
    let serverBinary: URL
    let workDirectory: URL
    let migrationsDirectory: URL
    private var servers: [ServerProcess] = []
    /// With `throughPgBouncer`, servers send their requests through it (transaction mode).
    private var bouncer: (PgBouncerProcess, connectionString: String)?
    /// `FaultSuite.holdWhenServing`.
    var holdsWhenServing = false

    init(name: String, serverBinary: URL, migrationsDirectory: URL, throughPgBouncer: Bool = false, databaseURL: String? = nil) async throws {
        workDirectory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("habitsync-faults-\(getpid())-\(name)-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        self.serverBinary = serverBinary
        self.migrationsDirectory = migrationsDirectory.standardizedFileURL
        database = try await HarnessDatabase(databaseURL: databaseURL, directory: workDirectory, migrationsDirectory: migrationsDirectory, maxConnections: 120)
        if throughPgBouncer {
            // Four server connections for the servers' pools of ten.
            bouncer = try await database.pgBouncer(poolSize: 4)
        }
    }

    /// With `holdsWhenServing`, says so and waits until the run is interrupted (its handler
    /// stops the servers and the cluster); otherwise returns at once.
    func holdIfAsked(_ what: String) async throws {
        guard holdsWhenServing else { return }
        // Unbuffered: stdout may be a file nobody reads until the run ends.
        FileHandle.standardOutput.write(Data("\(what) serving; holding until interrupted\n".utf8))
        while true { try await Task.sleep(for: .seconds(3_600)) }
    }

    /// What a server's arguments add when it runs behind PgBouncer: as deploy/README.md says
    /// (named prepared statements from PgBouncer 1.21, which keeps track of them).
    var poolingArguments: [String] {
        guard let bouncer else { return [] }
        return [
            "--request-database-url", bouncer.connectionString, "--request-pooling", "transaction",
            "--prepared-statements", bouncer.0.tracksPreparedStatements ? "on" : "off",
        ]
    }

    /// A started server process on this environment's database.
    func startServer(name: String = "server", extraArguments: [String] = []) async throws -> ServerProcess {
        let server = ServerProcess(
            binary: serverBinary, databaseURL: database.connectionString, logDirectory: workDirectory, name: name,
            // The scenarios judge durability, not speed: generous timeouts, so that a busy
            // machine (CI builds beside it) makes requests slower rather than answered 503.
            extraArguments: [
                "--migrate", "off", "--pool-size", "10", "--migrations-dir", migrationsDirectory.path,
                "--statement-timeout", "60s", "--pool-lease-timeout", "60s",
            ] + poolingArguments + extraArguments)
        servers.append(server)
        try await server.start()
        return server
    }

    func client(user: String, device: String, baseURL: String) async throws -> DeviceClient {
        DeviceClient(baseURL: baseURL, token: try await database.token(user: user), device: device, timeout: 60)
    }

    /// Stops every server and the cluster, and removes the folder (kept when `keep`, for a
    /// failed scenario's logs).
    func close(keep: Bool) async {
        for server in servers { await server.stop(grace: .seconds(10)) }
        bouncer?.0.stop()
        await database.close()
        if !keep { try? FileManager.default.removeItem(at: workDirectory) }
    }
}
