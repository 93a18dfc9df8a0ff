import EmbeddedPostgres
import Foundation
import Logging
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL cluster made for one process (the test suite) or one harness run (benchmark,
/// fault suite, fuzzer): under the temporary folder, which the `postgres` user can enter when
/// we are root; stopped by whoever started it, and on an interrupt (`HarnessCleanup`); a
/// cluster left by a killed process is removed by the next one. `pg_ctl` runs on NIO's
/// blocking pool, never on the cooperative threads that also run the load.
public final class ThrowawayCluster: Sendable {
    public let postgres: EmbeddedPostgres
    public let running: EmbeddedPostgres.Running
    private let cleanup: UUID

    /// - Parameters:
    ///   - prefix: the folder is `<tmp>/<prefix>-<pid>[-<suffix>]`; leftovers of dead processes
    ///     with the same prefix are removed first.
    ///   - durable: fsync on; off is fine while PostgreSQL itself is never crashed.
    public static func start(
        prefix: String, suffix: String? = nil, databaseName: String = "postgres", durable: Bool = false,
        maxConnections: Int = 200, directory explicit: URL? = nil, logger: Logger
    ) async throws -> ThrowawayCluster {
        removeLeftovers(prefix: prefix, logger: logger)
        let name = "\(prefix)-\(getpid())" + (suffix.map { "-\($0)" } ?? "")
        let directory = explicit ?? URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(name)
        let postgres = try EmbeddedPostgres(
            configuration: .init(directory: directory, databaseName: databaseName, durable: durable, maxConnections: maxConnections), logger: logger)
        let running = try await blocking { try postgres.start() }
        return ThrowawayCluster(postgres: postgres, running: running)
    }

    private init(postgres: EmbeddedPostgres, running: EmbeddedPostgres.Running) {
        self.postgres = postgres
        self.running = running
        cleanup = HarnessCleanup.shared.register { postgres.stop(mode: .immediate) }
    }

    /// `pg_ctl stop -m fast`: sessions are cut, as in an outage.
    public func pause() async throws { try await Self.blocking { self.postgres.stop(mode: .fast) } }

    /// Starts again on the port it had.
    public func resume() async throws { _ = try await Self.blocking { try self.postgres.start(port: self.running.port) } }

    /// Stops the cluster and, when `remove`, deletes its folder.
    public func stop(remove: Bool = false) async {
        try? await Self.blocking { self.postgres.stop() }
        HarnessCleanup.shared.unregister(cleanup)
        if remove { try? FileManager.default.removeItem(at: postgres.configuration.directory) }
    }

    /// For an exit handler, which cannot wait: stop at once and remove the folder.
    public func stopImmediately() {
        postgres.stop(mode: .immediate)
        try? FileManager.default.removeItem(at: postgres.configuration.directory)
    }

    /// Clusters of processes that died without cleaning up (killed runs).
    static func removeLeftovers(prefix: String, logger: Logger) {
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory())
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary.path) else { return }
        for name in names where name.hasPrefix(prefix + "-") {
            let rest = name.dropFirst(prefix.count + 1)
            guard let pid = Int32(rest.prefix { $0.isNumber }), pid != getpid(), kill(pid, 0) != 0 else { continue }
            let directory = temporary.appendingPathComponent(name)
            let cluster = directory.lastPathComponent == "postgres" ? directory : directory.appendingPathComponent("postgres")
            for candidate in [directory, cluster] {
                if let stale = try? EmbeddedPostgres(configuration: .init(directory: candidate, databaseName: "postgres", durable: false), logger: logger) {
                    stale.stop(mode: .immediate)
                }
            }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func blocking<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await NIOThreadPool.singleton.runIfActive(work)
    }
}
