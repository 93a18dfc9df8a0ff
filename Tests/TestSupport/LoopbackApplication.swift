import Hummingbird
import HummingbirdCore
import Logging

/// A test's loopback HTTP server: `router` served on 127.0.0.1 at a port the system chooses.
/// Returns that port and the task that serves (cancel it to stop the server).
enum LoopbackApplication {
    /// `server`: HTTP/1.1 unless a test needs another (HTTP/2 over TLS, `LoopbackAPNs`).
    static func start<Context: RequestContext>(
        _ router: Router<Context>, server: HTTPServerBuilder = .http1(), label: String
    ) async -> (port: Int, task: Task<Void, any Error>) where Context.Source == ApplicationRequestContextSource {
        let (portStream, portContinuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: label)
        // Its shutdown reports the cancelled listener as an error: nothing a test needs to see.
        logger.logLevel = .critical
        let app = Application(
            router: router, server: server, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var port = 0
        for await bound in portStream {
            port = bound
            break
        }
        return (port, task)
    }
}
