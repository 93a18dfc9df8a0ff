import ServiceLifecycle
import Synchronization

/// Whether the server should receive traffic. Flips to "shutting down" the moment graceful
/// shutdown starts, before the HTTP server stops accepting, so `/readyz` turns 503 first.
public final class Readiness: Service, Sendable {
    private let shuttingDown = Atomic<Bool>(false)

    public init() {}

    public var isShuttingDown: Bool { shuttingDown.load(ordering: .relaxed) }

    public func beginShutdown() { shuttingDown.store(true, ordering: .relaxed) }

    /// Waits for graceful shutdown and marks the server not ready. Listed last in the service
    /// group, it is the first to hear of shutdown.
    public func run() async throws {
        try? await gracefulShutdown()
        beginShutdown()
    }
}
