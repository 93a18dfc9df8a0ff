import HabitSyncStore
import LibPQClient
import Synchronization

/// On a Citus cluster whose users' requests run on their nodes (`UserPools`), a push's notice
/// is sent on the node where the push commits, and only a listener connected there hears it.
/// One `LISTEN` connection per node that holds users, opened as soon as the map of the nodes is
/// read (`follow`, when the change feed starts and on each of its ticks: a node a rebalance
/// added is followed within a tick). The server counts as listening only while the main
/// listener and every node's are up (`allListening`).
final class NodeListeners: Sendable {
    let pools: UserPools
    private let configuration: PGConnectionConfiguration
    private let channel: String
    private let state = Mutex(State())

    private struct State {
        var listeners: [PGNodeAddress: (listener: PGListener, task: Task<Void, Never>)] = [:]
        var listening: Set<PGNodeAddress> = []
        var mainListening = false
        var stopped = false
    }

    init(pools: UserPools, configuration: PGConnectionConfiguration, channel: String) {
        self.pools = pools
        self.configuration = configuration
        self.channel = channel
    }

    /// Starts a listener on each node of the map (and each node a request has a pool for) that
    /// has none yet; its events go to `handle` with the node.
    func follow(_ handle: @escaping @Sendable (PGNodeAddress, PGListener.Event) -> Void) {
        let nodes = (pools.map?.nodes ?? []).union(pools.nodes)
        for node in nodes.sorted() {
            state.withLock { state in
                guard !state.stopped, state.listeners[node] == nil else { return }
                let listener = PGListener(configuration: configuration.at(node), channel: channel)
                listener.start()
                let task = Task {
                    for await event in listener.events { handle(node, event) }
                }
                state.listeners[node] = (listener, task)
            }
        }
    }

    /// Notes that `node`'s listener is up (true) or lost (false).
    func record(_ node: PGNodeAddress, listening: Bool) {
        state.withLock { state in
            if listening { state.listening.insert(node) } else { state.listening.remove(node) }
        }
    }

    /// Notes that the main listener (on the coordinator) is up or lost.
    func recordMain(listening: Bool) { state.withLock { $0.mainListening = listening } }

    /// The main listener and every node's are up.
    var allListening: Bool { state.withLock { $0.mainListening && $0.listening.isSuperset(of: $0.listeners.keys) } }

    /// Whether requests have already run on `node`: then what they committed before its
    /// listener was up was heard by nobody.
    func hasServed(_ node: PGNodeAddress) -> Bool { (pools.pool(at: node)?.roundTrips.count ?? 0) > 0 }

    /// Stops every listener and waits for their threads and event loops to end.
    func stopAndWait() async {
        let listeners = state.withLock { state in
            state.stopped = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for (listener, task) in listeners {
            await listener.stopAndWait()
            await task.value
        }
    }
}
