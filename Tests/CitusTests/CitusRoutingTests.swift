import Foundation
import HabitSyncAuth
import HabitSyncClient
import HabitSyncDomain
import HabitSyncServer
import LibPQClient
import ServerHarness
import SyncTestSupport
import Synchronization
import TestSupport
import Testing

@testable import HabitSyncStore

/// Issue 47: each user's requests run on the node that holds the user (`UserPools`), where
/// Citus executes the shard's statements in the same backend, and they follow the user when
/// the user's shards move.
@Suite(.enabled(if: TestPostgres.onCitus, "needs a Citus cluster: scripts/test-citus"))
struct CitusRoutingTests {
    /// The server's own hash and map name the node Citus' catalog names, for many users: the
    /// hash is Citus' `worker_hash`, and every user maps to the worker holding them.
    @Test func theServersMapNamesTheNodeCitusPlacesEachUserOn() async throws {
        let world = try await SyncWorld.make()
        let users = (0..<200).map { "user-\($0)-\(UUID().uuidString.prefix(4))" } + ["", "café", "cafe\u{301}", "日本語", String(repeating: "x", count: 500)]
        let placed = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT u.id, worker_hash(u.id) AS hash, n.nodename || ':' || n.nodeport AS node,
                           'users_' || get_shard_id_for_distribution_column('users', u.id) AS users_shard,
                           'daily_progress_' || get_shard_id_for_distribution_column('daily_progress', u.id) AS progress_shard,
                           'tenants_' || (SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'tenants'::regclass) AS tenants_shard
                    FROM unnest(\(users)::text[]) AS u(id)
                    JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('users', u.id)
                    JOIN pg_dist_node n ON n.groupid = p.groupid
                    """
                ).rows
            }
        }
        #expect(placed.count == users.count)
        let read = try await world.database.withPool(size: 1) { pool in
            let pools = UserPools(citusCoordinator: pool, logger: TestPostgres.logger)
            await pools.readMap()
            return pools.map
        }
        let map = try #require(read)
        // As the server reads it: with the request role, whose read-only reference tables it names.
        let asServer = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { try await UserPlacementMap.read($0, requestRole: "habitsync_app") }
        }
        let named = try #require(asServer)
        #expect(named.nodes == map.nodes)
        #expect(Set(map.nodes.map(\.description)) == Set(TestPostgres.citusNodes.dropFirst()))
        for row in placed {
            let user = try row.decode("id", as: String.self)
            #expect(DistributionHash.of(Array(user.utf8)) == (try row.decode("hash", as: Int32.self)), "\(user.prefix(40))")
            #expect(map.node(for: UserKey(tenant: world.tenant, user: user))?.description == (try row.decode("node", as: String.self)), "\(user.prefix(40))")
            // The names a routed transaction uses: the user's shards, and the local copy of a
            // reference table the request role may only read; not `erased_users`, which it writes.
            let names = try #require(named.shardGroup(for: UserKey(tenant: world.tenant, user: user))).names.names
            #expect(names["users"] == (try row.decode("users_shard", as: String.self)))
            #expect(names["daily_progress"] == (try row.decode("progress_shard", as: String.self)))
            #expect(names["tenants"] == (try row.decode("tenants_shard", as: String.self)))
            #expect(names["erased_users"] == nil && names["usage_events_2026_01"] == nil)
        }
    }

    /// A user's push and pull with a recompute, through the routed stores: each
    /// transaction runs on the user's own worker and talks to no other node
    /// (`citus.log_remote_commands`, which the node sessions inherit from the coordinator's
    /// configuration): nothing is planned on the coordinator, nothing sent between nodes. (A
    /// statement whose `WITH` Citus plans on its own still sends that result to the worker
    /// itself, over a connection of its own, and then commits in two phases: BENCHMARKS.md,
    /// "Citus that pays".)
    @Test func aUsersRequestsRunOnTheirWorkerAndTalkToNoOtherNode() async throws {
        let world = try await SyncWorld.make()
        let identity = VerifiedIdentity.trusted(tenantID: world.tenant, userID: "alice")
        let home = try await CitusTests.worker(of: "alice", in: world)
        let timeout = ServerConfiguration.forTests.statementTimeout
        let habit = UUID()
        let later = Date().addingTimeInterval(3 * 86_400)  // a later day: the pull recomputes
        let (nodes, commands) = try await CitusTests.remoteCommands(on: world) { pool in
            let pools = UserPools(citusCoordinator: pool, logger: TestPostgres.logger)
            let push = PushStore(pool: pool, statementTimeout: timeout, pools: pools)
            _ = try await StorePush.results(CitusTests.firstBatch(habit: habit), through: push, as: identity)
            let results = try await StorePush.results(CitusTests.everyCollectionBatch(habit: habit), through: push, as: identity)
            #expect(results.filter { $0["status"] as? String == "applied" }.count == 7, "\(results)")
            let page = try await PullStore(pool: pool, statementTimeout: timeout, pools: pools)
                .pull(identity: identity, after: nil, limit: 500, collections: SyncCollection.allCases, now: later)
            #expect(page.changes.count >= 9)
            let nodes = pools.nodes.map(\.description)
            await pools.close()
            return nodes
        }
        print("Citus routing: alice's requests ran on \(nodes), \(commands.commands.count) remote commands")
        #expect(nodes == [home])
        // Their statements name alice's shards: Citus plans none of them, and sends nothing.
        #expect(commands.commands.isEmpty, "\(commands.commands.joined(separator: "\n"))")
        #expect(try await world.count("usage_events") == 1)
    }

    /// Issue 47's rebalancing proof: a user's shard group moves to the other worker
    /// (`citus_move_shard_placement`, `block_writes`: a move by logical replication cannot
    /// apply rows to this schema's tables, whose row-level security is forced) while three of the user's devices push
    /// and pull through the server. Nothing acknowledged is lost, no device sees an answer but
    /// 200 or a 503 it retries, and once the server has read the new map, the user's requests
    /// run on the new worker: its pool's round trips grow and the old worker's do not.
    @Test func aUsersRequestsFollowTheirShardsWhenTheyMoveUnderLoad() async throws {
        let mode = "block_writes"
        let world = try await SyncWorld.make()
        let user = "mover"
        let from = try await CitusTests.worker(of: user, in: world)
        let to = try #require(TestPostgres.citusNodes.dropFirst().first { $0 != from })
        let flags = CitusTests.MoveFlags()
        struct Seen: Sendable { var acknowledged: Set<String> = []; var pushes = 0, pulls = 0, unavailable = 0; var other: [Int] = [] }
        try await world.serve(routeToNodes: true) { server in
            let pools = try #require(server.userPools)
            let seen = try await withThrowingTaskGroup(of: Seen.self) { group in
                for index in 0..<3 {
                    let device = try await world.client(server, user: user, device: "device-\(index)")
                    group.addTask {
                        var mine = Seen()
                        var after = 0
                        while after < 3 {
                            if flags.finished.load(ordering: .acquiring) { after += 1 }
                            let changes = (0..<4).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()) }
                            let batch = UUID()
                            while true {
                                let reply = try await device.push(changes, batchID: batch, allowUnavailable: true)
                                if reply.status == 200 { break }
                                if reply.status == 503 { mine.unavailable += 1 } else { mine.other.append(reply.status) }
                                guard mine.unavailable < 200, mine.other.isEmpty else { return mine }
                                try await Task.sleep(for: .milliseconds(50))
                            }
                            mine.pushes += 1
                            mine.acknowledged.formUnion(changes.map { ($0["id"] as? String ?? "").lowercased() })
                            let pulled = try await device.client.pull(cursor: nil, limit: 1, collections: nil, extra: "")
                            if pulled.status == 200 { mine.pulls += 1 } else if pulled.status == 503 { mine.unavailable += 1 } else { mine.other.append(pulled.status) }
                        }
                        return mine
                    }
                }
                // Wait until the devices' requests run on the user's worker, then move.
                while pools.pool(at: Self.address(from)) == nil { try await Task.sleep(for: .milliseconds(20)) }
                try await CitusTests.moveShards(of: user, from: from, to: to, in: world, mode: mode)
                flags.finished.store(true, ordering: .releasing)
                var all = Seen()
                for try await one in group {
                    all.acknowledged.formUnion(one.acknowledged)
                    all.pushes += one.pushes
                    all.pulls += one.pulls
                    all.unavailable += one.unavailable
                    all.other += one.other
                }
                return all
            }
            #expect(try await CitusTests.worker(of: user, in: world) == to, "the shard group did not move")
            #expect(seen.other.isEmpty, "answers other than 200 and 503: \(seen.other)")
            // Every acknowledged event is stored once, and pulled back.
            let device = try await world.client(server, user: user, device: "device-0")
            let stored = Set(try await device.pullAll().changes.filter { $0["collection"] as? String == "usageEvents" }.map { ($0["id"] as? String ?? "").lowercased() })
            #expect(stored == seen.acknowledged)
            #expect(try await world.count("usage_events") == seen.acknowledged.count)

            // The next read of the map (at most `maximumAge` later; asked for here) sends the
            // user's requests to the new worker.
            await pools.readMap()
            #expect(pools.map?.node(for: UserKey(tenant: world.tenant, user: user))?.description == to)
            let oldTrips = pools.pool(at: Self.address(from))?.roundTrips.count ?? 0
            let newTrips = pools.pool(at: Self.address(to))?.roundTrips.count ?? 0
            for _ in 0..<3 {
                let reply = try await device.push([Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent())])
                #expect(reply.status == 200)
                #expect(try await device.pull().status == 200)
            }
            #expect(pools.pool(at: Self.address(from))?.roundTrips.count ?? 0 == oldTrips, "a request still ran on the old worker")
            #expect((pools.pool(at: Self.address(to))?.roundTrips.count ?? 0) > newTrips, "no request ran on the new worker")
            print(
                "Citus routing (\(mode)): \(user)'s shard group moved from \(from) to \(to) under load: \(seen.pushes) pushes and \(seen.pulls) pulls acknowledged, \(seen.unavailable) answers 503 (retried), \(seen.acknowledged.count) events stored once; afterwards its requests ran on \(to)"
            )
        }
    }

    /// A request that reaches the node the user's shards just left (the map read before the
    /// move) is refused there before it reads or writes anything (`habitsync_hold_shard`,
    /// HS421) and runs again where the shards are: the device sees one 200, and the change is
    /// stored once, on the new worker.
    @Test func aRequestOnTheNodeTheShardsLeftRunsAgainWhereTheyAre() async throws {
        let world = try await SyncWorld.make()
        let user = "moved"
        let from = try await CitusTests.worker(of: user, in: world)
        let to = try #require(TestPostgres.citusNodes.dropFirst().first { $0 != from })
        try await world.serve(routeToNodes: true) { server in
            let pools = try #require(server.userPools)
            let device = try await world.client(server, user: user, device: "phone")
            #expect(try await device.push([Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent())]).status == 200)
            #expect(pools.map?.node(for: UserKey(tenant: world.tenant, user: user))?.description == from)
            try await CitusTests.moveShards(of: user, from: from, to: to, in: world)
            // No request since the move: the server's map still names the old node.
            #expect(pools.map?.node(for: UserKey(tenant: world.tenant, user: user))?.description == from)
            let event = UUID()
            #expect(try await device.push([Wire.change("usageEvents", event, at: Wire.at(0), record: Wire.usageEvent())]).status == 200)
            #expect(pools.shardsMovedAway == 1, "the request was not refused on the old node")
            #expect(pools.map?.node(for: UserKey(tenant: world.tenant, user: user))?.description == to)
            #expect(try await world.count("usage_events") == 2)
            let stored = try await device.pullAll().changes.compactMap { $0["id"] as? String }.map { $0.lowercased() }
            #expect(stored.filter { $0 == event.uuidString.lowercased() }.count == 1)
        }
    }

    /// A push routed to the user's worker is heard on that user's other device's event
    /// stream, through the other replica too: each replica listens on every node that holds
    /// users, where a routed push's notice is sent.
    @Test func aRoutedPushIsHeardOnTheUsersOtherDeviceThroughEitherReplica() async throws {
        let world = try await SyncWorld.make()
        try await world.serve(routeToNodes: true) { replicaA in
            try await world.serve(routeToNodes: true) { replicaB in
                try await RealtimeKit.waitUntilListening(replicaA)
                try await RealtimeKit.waitUntilListening(replicaB)
                let watch = try await RealtimeKit.engine(world, replicaB, user: "ada", device: "watch")
                var events = try await RealtimeKit.open(watch)
                let phone = try await RealtimeKit.engine(world, replicaA, user: "ada", device: "phone")
                try phone.store.save(Habit(name: "Read", startDate: LocalDate(year: 2026, month: 11, day: 1)!))
                _ = try await phone.sync()
                let version = try SyncCollection.allCases.flatMap { try phone.store.records($0, includingDeleted: true) }.compactMap(\.serverVersion).max() ?? 0
                let event = try #require(try await RealtimeKit.nextEvent(&events))
                #expect(event.name == "change" && event.id == String(version), "\(event)")
                #expect(replicaA.userPools?.nodes.map(\.description) == [try await CitusTests.worker(of: "ada", in: world)])
            }
        }
    }

    static func address(_ node: String) -> PGNodeAddress {
        let (host, port) = TestPostgres.hostAndPort(node)
        return PGNodeAddress(host: host, port: port)
    }
}
