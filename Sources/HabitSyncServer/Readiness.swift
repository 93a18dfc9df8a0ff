import ServiceLifecycle
import Synchronization

/// Whether the server should receive traffic. Flips to "shutting down" the moment graceful
/// shutdown starts, so `/readyz` turns 503 first; then stops the listener accepting
/// (`ListenerQuiescing`) before the HTTP server's own shutdown closes it.
public final class Readiness: Service, Sendable {
    private let shuttingDown = Atomic<Bool>(false)
    /// What must happen before the HTTP server's own shutdown begins (`ListenerQuiescing`).
    private let beforeServerShutdown = Mutex<(@Sendable () async -> Void)?>(nil)

    public init() {}

    public var isShuttingDown: Bool { shuttingDown.load(ordering: .relaxed) }

    public func beginShutdown() { shuttingDown.store(true, ordering: .relaxed) }

    func runBeforeServerShutdown(_ action: @escaping @Sendable () async -> Void) {
        beforeServerShutdown.withLock { $0 = action }
    }

    /// Waits for graceful shutdown, marks the server not ready and stops it accepting
    /// connections. Listed after the application in the service group, it is the first to hear
    /// of shutdown, and the application's shutdown begins when this returns.
    public func run() async throws {
        try? await gracefulShutdown()
        beginShutdown()
        await beforeServerShutdown.withLock { $0 }?()
    }
}
