import HabitSyncStore
import LibPQClient
import Logging
import ServiceLifecycle

/// The server's one `LISTEN` connection, turned into signals on the open streams: each
/// committed push's notice goes to the user's streams; after the listener reconnects
/// (PostgreSQL restarted, the connection was cut), every stream is told to pull, since
/// notifications sent meanwhile are lost. Also drives heartbeats and lifetimes.
struct ChangeFeed: Service {
    let listener: PGListener
    let streams: ChangeStreams
    let metrics: ServerMetrics
    let logger: Logger
    /// Opens when the HTTP server listens: no connection is made before.
    let serving: ServingGate

    func run() async throws {
        metrics.recordListening(false)
        // However this ends (shutdown, or the server failing to start and the group cancelling
        // every service), the listener's thread has ended before `run` returns.
        guard await cancelWhenGracefulShutdown({ await serving.wait() }) else {
            await listener.stopAndWait()
            return
        }
        listener.start()
        do {
            try await listen()
        } catch {
            await listener.stopAndWait()
            throw error
        }
        await listener.stopAndWait()
    }

    private func listen() async throws {
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in listener.events { handle(event) }
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: streams.limits.tick)
                        streams.tick()
                    }
                }
                // The events end when the listener stops (graceful shutdown).
                try await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            streams.close(reason: "shutting_down")
            listener.stop()
        }
    }

    private func handle(_ event: PGListener.Event) {
        switch event {
        case .listening(reconnected: false):
            metrics.recordListening(true)
            // Streams opened before the first connection (PostgreSQL was not up) may have
            // missed a change: they pull too.
            streams.pullEverywhere(reason: "listener_reconnected")
            logger.info("listening for changes", metadata: ["channel": "\(listener.channel)"])
        case .listening(reconnected: true):
            metrics.recordListening(true)
            metrics.recordListenerReconnect()
            let told = streams.pullEverywhere(reason: "listener_reconnected")
            logger.warning("change listener reconnected; every stream told to pull", metadata: ["streams": "\(told)"])
        case .lost:
            metrics.recordListening(false)
            logger.warning("change listener lost its connection; reconnecting")
        case .notification(let payload):
            metrics.recordNotification()
            guard let notice = ChangeNotice(payload: payload) else {
                logger.warning("ignored a malformed change notice")
                return
            }
            streams.deliver(notice)
        }
    }
}
