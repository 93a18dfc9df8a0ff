import HabitSyncStore
import LibPQClient
import Logging
import ServiceLifecycle
import Tracing

/// The server's one `LISTEN` connection, turned into signals on the open streams: each
/// committed push's notice goes to the user's streams; after the listener reconnects
/// (PostgreSQL restarted, the connection was cut), every stream is told to pull, since
/// notifications sent meanwhile are lost. Also drives heartbeats and lifetimes.
struct ChangeFeed: Service {
    let listener: PGListener
    /// On Citus with users routed to their nodes: a listener on each of those nodes too.
    let nodeListeners: NodeListeners?
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
            await stopListening()
            return
        }
        listener.start()
        if let nodeListeners {
            // The nodes' listeners start with the main one, before any request runs there.
            await nodeListeners.pools.readMap()
            nodeListeners.follow { handleNode($0, $1) }
        }
        do {
            try await listen()
        } catch {
            await stopListening()
            throw error
        }
        await stopListening()
    }

    private func stopListening() async {
        await listener.stopAndWait()
        await nodeListeners?.stopAndWait()
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
                        nodeListeners?.follow { handleNode($0, $1) }
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

    /// A node's listener: its notices like the main one's. Reconnected, or connected after
    /// requests already ran on its node, it tells every stream to pull: what the node committed
    /// meanwhile was heard by nobody. The server counts as listening while every listener is up.
    private func handleNode(_ node: PGNodeAddress, _ event: PGListener.Event) {
        guard let nodeListeners else { return }
        switch event {
        case .listening(let reconnected):
            nodeListeners.record(node, listening: true)
            if reconnected || nodeListeners.hasServed(node) {
                if reconnected { metrics.recordListenerReconnect() }
                let told = streams.pullEverywhere(reason: "listener_reconnected")
                logger.warning("a node's change listener connected after requests ran there; every stream told to pull", metadata: ["node": "\(node)", "streams": "\(told)"])
            }
            metrics.recordListening(nodeListeners.allListening)
        case .lost:
            nodeListeners.record(node, listening: false)
            metrics.recordListening(false)
            logger.warning("a node's change listener lost its connection; reconnecting", metadata: ["node": "\(node)"])
        case .notification:
            handle(event)
        }
    }

    /// The main listener, up: with the nodes' listeners, what the listening gauge shows.
    private func recordMainListening(_ listening: Bool) {
        guard let nodeListeners else { return metrics.recordListening(listening) }
        nodeListeners.recordMain(listening: listening)
        metrics.recordListening(nodeListeners.allListening)
    }

    private func handle(_ event: PGListener.Event) {
        switch event {
        case .listening(reconnected: false):
            recordMainListening(true)
            // Streams opened before the first connection (PostgreSQL was not up) may have
            // missed a change: they pull too.
            streams.pullEverywhere(reason: "listener_reconnected")
            logger.info("listening for changes", metadata: ["channel": "\(listener.channel)"])
        case .listening(reconnected: true):
            recordMainListening(true)
            metrics.recordListenerReconnect()
            let told = streams.pullEverywhere(reason: "listener_reconnected")
            logger.warning("change listener reconnected; every stream told to pull", metadata: ["streams": "\(told)"])
        case .lost:
            recordMainListening(false)
            logger.warning("change listener lost its connection; reconnecting")
        case .notification(let payload):
            metrics.recordNotification()
            guard let notice = ChangeNotice(payload: payload) else {
                logger.warning("ignored a malformed change notice")
                return
            }
            deliver(notice)
        }
    }

    /// Tells the user's streams. A traced push's notice is a span of the push's trace
    /// (`realtime.notice`), on whichever replica hears it.
    private func deliver(_ notice: ChangeNotice) {
        guard let traceParent = notice.traceParent else {
            streams.deliver(notice)
            return
        }
        let span = startSpan("realtime.notice", context: TraceParent.context(continuing: traceParent), ofKind: .consumer)
        span.attributes["habitsync.streams_told"] = streams.deliver(notice)
        span.end()
    }
}
