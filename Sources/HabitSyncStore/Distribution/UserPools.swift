import Foundation
import LibPQClient
import Logging
import Synchronization

/// Which pool runs a user's transactions. On one database, its one pool. On a Citus cluster
/// (deploy/README.md, "Citus"), the pool of the node holding the user's shard group, where
/// Citus runs the shard's statements in the same process instead of sending them from the
/// coordinator: one pool per node, opened on the first request for one of its users, with
/// the coordinator's connection string, role and settings and the node's host and port.
///
/// The map comes from the coordinator's catalog, read on the first request and again once it
/// is `maximumAge` old (in the background: requests meanwhile use the map they have). A
/// request sent to a node that no longer holds the user (a shard moved since the map was
/// read) is still right: every node has Citus' metadata and forwards it to the node that
/// does, one hop more, until the next read. When the catalog cannot be read, the coordinator
/// serves every request, as without routing.
public final class UserPools: Sendable {
    /// The pool of the database the server was given: everything that is not one user's.
    public let coordinator: PGPool
    public let maximumAge: Duration
    private let routesToNodes: Bool
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var map: UserPlacementMap?
        var readAt: ContinuousClock.Instant?
        var reading: Task<Void, Never>?
        var pools: [PGNodeAddress: PGPool] = [:]
        var closed = false
    }

    /// Every transaction on `pool`.
    public init(single pool: PGPool) {
        coordinator = pool
        routesToNodes = false
        maximumAge = .seconds(5)
        logger = Logger(label: "habitsync")
    }

    /// Each user's transactions on the node that holds the user's shards.
    public init(citusCoordinator pool: PGPool, maximumAge: Duration = .seconds(5), logger: Logger) {
        coordinator = pool
        routesToNodes = true
        self.maximumAge = maximumAge
        self.logger = logger
    }

    /// The pool for `user`'s transactions.
    public func pool(for user: UserKey) async -> PGPool {
        guard routesToNodes else { return coordinator }
        // The first requests wait for one read of the map, not one read each.
        if state.withLock({ $0.readAt == nil }) { await reading()?.value }
        let clock = ContinuousClock()
        let (pool, stale): (PGPool, Bool) = state.withLock { state in
            let stale = state.reading == nil && (state.readAt.map { clock.now - $0 > maximumAge } ?? true)
            guard !state.closed, let map = state.map, let node = map.node(for: user) else { return (coordinator, stale) }
            if let pool = state.pools[node] { return (pool, stale) }
            let pool = PGPool(
                configuration: .init(
                    connection: coordinator.configuration.connection.at(node), maximumConnections: coordinator.configuration.maximumConnections,
                    leaseTimeout: coordinator.configuration.leaseTimeout), logger: logger)
            state.pools[node] = pool
            return (pool, stale)
        }
        if stale { _ = reading() }
        return pool
    }

    /// The nodes that have a pool: where users' transactions commit, and so where their
    /// change notices are sent (the realtime listener hears each).
    public var nodes: [PGNodeAddress] { state.withLock { $0.pools.keys.sorted() } }

    /// The pool of `node`, if a request has opened one (a test counts its round trips).
    public func pool(at node: PGNodeAddress) -> PGPool? { state.withLock { $0.pools[node] } }

    /// The map as last read; nil before the first read or where nothing is distributed.
    public var map: UserPlacementMap? { state.withLock { $0.map } }

    /// Reads the map now (a test that moved a shard, or the first request).
    public func readMap() async {
        do {
            let map = try await coordinator.withConnection { try await UserPlacementMap.read($0) }
            let changed = state.withLock { state in
                defer {
                    state.map = map
                    state.readAt = ContinuousClock().now
                }
                return state.map != map
            }
            if changed, let map {
                logger.info("read where users' shards live", metadata: ["nodes": "\(map.nodes.sorted().map(\.description).joined(separator: ","))"])
            }
        } catch {
            // Kept: the map read last, or none (the coordinator serves). Asked again later.
            state.withLock { $0.readAt = ContinuousClock().now }
            logger.warning("could not read where users' shards live", metadata: ["error": "\(error)"])
        }
    }

    /// The read of the map under way, or a new one started; nil once closed.
    private func reading() -> Task<Void, Never>? {
        state.withLock { state in
            guard !state.closed else { return nil }
            if let reading = state.reading { return reading }
            let reading = Task {
                await self.readMap()
                self.state.withLock { $0.reading = nil }
            }
            state.reading = reading
            return reading
        }
    }

    /// Closes the nodes' pools (the coordinator's is its owner's) and stops their threads.
    public func close() async {
        let (pools, reading) = state.withLock { state in
            state.closed = true
            defer { state.pools = [:] }
            return (Array(state.pools.values), state.reading)
        }
        await reading?.value
        for pool in pools {
            pool.close()
            await pool.shutdownThreads()
        }
    }
}
