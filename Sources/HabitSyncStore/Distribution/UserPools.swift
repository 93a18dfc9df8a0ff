import Foundation
import LibPQClient
import Logging
import Synchronization

/// Which pool runs a user's transactions. On one database, its one pool. On a Citus cluster
/// (deploy/README.md, "Routing to the user's node"), the pool of the node holding the user's
/// shard group, whose statements name the user's shards there (`withUserTransaction`): one pool
/// per node, opened on the first request for one of its users, with the coordinator's
/// connection string, role and settings and the node's host and port.
///
/// The map comes from the coordinator's catalog, read on the first request and again once it
/// is `maximumAge` old (in the background: requests meanwhile use the map they have). A
/// transaction that reaches a node the user's shards have left is refused there before it
/// does anything and runs again through Citus' own routing (`withUserTransaction`). When the
/// catalog cannot be read, the coordinator serves every request, as without routing.
public final class UserPools: Sendable {
    /// The pool of the database the server was given: everything that is not one user's.
    public let coordinator: PGPool
    public let maximumAge: Duration
    private let routesToNodes: Bool
    private let logger: Logger
    private let state = Mutex(State())
    private let movedAway = Atomic<Int>(0)

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

    /// Runs `body` as a transaction of `user`'s, on the node holding the user's shards. Routed,
    /// its statements name the user's shards (`PGRelationNames`), not the distributed tables,
    /// and `body` is told so (`onShards`: every statement runs on that node's own tables, as on
    /// one server); the transaction first holds the shards against a move
    /// (`habitsync_hold_shard`, migration 0040). When they moved since the map was read
    /// (HS421), the map is read again and the transaction runs again through Citus' own
    /// routing, which finds the shards wherever they are. `shardSettings`: settings for a
    /// transaction on the shards only (with `localSettings`, in the same round trip).
    public func withUserTransaction<Result>(
        _ user: UserKey, isolation: PGPool.IsolationLevel = .readCommitted, readOnly: Bool = false, statementTimeout: Duration? = nil,
        localSettings: [PGLocalSetting] = [], onShards shardSettings: [PGLocalSetting] = [], _ body: (PGConnection, _ onShards: Bool) async throws -> Result
    ) async throws -> Result {
        var shardsAllowed = true
        while true {
            let route = await route(for: user, onShards: shardsAllowed)
            var settings = localSettings
            if let shards = route.shards {
                // Generic plans: on the shards' own tables the standard planner keeps them.
                settings += shardSettings + [PGLocalSetting("plan_cache_mode", "force_generic_plan")]
                if let months = shards.names.names["derived_streak_months"] { settings.append(PGLocalSetting("habitsync.streak_months_shard", months)) }
            }
            do {
                return try await route.pool.withTransaction(
                    isolation: isolation, readOnly: readOnly, statementTimeout: statementTimeout, localSettings: settings, relationNames: route.shards?.names
                ) { connection in
                    if let shards = route.shards { try connection.deferStatements([Self.holdShard(shards.usersShard)]) }
                    return try await body(connection, route.shards != nil)
                }
            } catch let error as PGError where error.sqlState == Self.shardNotHere && shardsAllowed {
                movedAway.add(1, ordering: .relaxed)
                logger.info("a user's shards moved since the map was read; reading it again")
                await readMap()
                shardsAllowed = false
            }
        }
    }

    /// Holds the user's shard (`users`'; its co-located shards move with it) against a move for
    /// the transaction, or refuses it with `shardNotHere` when this node no longer holds it.
    static func holdShard(_ shard: Int64) -> PGQuery { "SELECT habitsync_hold_shard(\(shard))" }

    /// What `habitsync_hold_shard` raises on a node that no longer holds the shard.
    static let shardNotHere = PGSQLState("HS421")

    /// The pool for `user`'s transactions and, routed (`onShards`), the user's shards there.
    func route(for user: UserKey, onShards: Bool = true) async -> (pool: PGPool, shards: (usersShard: Int64, names: PGRelationNames)?) {
        guard routesToNodes else { return (coordinator, nil) }
        // The first requests wait for one read of the map, not one read each.
        if state.withLock({ $0.readAt == nil }) { await reading()?.value }
        let clock = ContinuousClock()
        typealias Shards = (usersShard: Int64, names: PGRelationNames)
        let (pool, shards, stale): (PGPool, Shards?, Bool) = state.withLock { state in
            let stale = state.reading == nil && (state.readAt.map { clock.now - $0 > maximumAge } ?? true)
            guard !state.closed, let map = state.map, let group = map.shardGroup(for: user) else { return (coordinator, nil, stale) }
            let node = group.node
            let shards: Shards? = onShards ? (group.usersShard, group.names) : nil
            if let pool = state.pools[node] { return (pool, shards, stale) }
            let pool = PGPool(
                configuration: .init(
                    connection: coordinator.configuration.connection.at(node), maximumConnections: coordinator.configuration.maximumConnections,
                    leaseTimeout: coordinator.configuration.leaseTimeout), logger: logger)
            state.pools[node] = pool
            return (pool, shards, stale)
        }
        if stale { _ = reading() }
        return (pool, shards)
    }

    /// Transactions refused on a node the user's shards had left, and run again (a test counts them).
    public var shardsMovedAway: Int { movedAway.load(ordering: .relaxed) }

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
            let map = try await coordinator.withConnection { try await UserPlacementMap.read($0, requestRole: coordinator.configuration.connection.role) }
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
