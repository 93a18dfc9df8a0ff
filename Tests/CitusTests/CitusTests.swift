import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import Synchronization
import TestSupport
import Testing

/// What only a Citus cluster can show (deploy/README.md, "Citus"): the layout `distribute`
/// leaves, row-level security on the workers, and that one user's work touches one shard.
/// Runs in `scripts/test-citus` (HABITSYNC_TEST_CITUS_NODES), where every test database is a
/// distributed one; elsewhere the suite is skipped, and that target fails loudly without Citus.
@Suite(.enabled(if: TestPostgres.onCitus, "needs a Citus cluster: scripts/test-citus"))
struct CitusTests {
    static let referenceTables = ["erased_users", "erasure_keys", "tenant_keys", "tenants"]

    @Test func everyPerUserTableIsDistributedByUserAndCoLocatedWithUsers() async throws {
        let world = try await SyncWorld.make()
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                let userTables = try await connection.query(
                    """
                    SELECT DISTINCT (CASE WHEN c.relispartition THEN pg_partition_root(c.oid) ELSE c.oid END)::regclass::text AS name
                    FROM habitsync_user_tables() u JOIN pg_class c ON c.oid = u.relation ORDER BY 1
                    """
                ).rows.map { try $0.decode("name", as: String.self) }
                #expect(userTables.count >= 20, "\(userTables)")
                let layout = try await connection.query(
                    """
                    SELECT logicalrelid::text AS name, partmethod::text AS method, colocationid,
                           CASE WHEN partmethod = 'h' THEN column_to_column_name(logicalrelid, partkey) END AS column_name
                    FROM pg_dist_partition
                    """
                ).rows
                var byName: [String: (method: String, colocation: Int, column: String?)] = [:]
                for row in layout {
                    byName[try row.decode("name")] = (try row.decode("method"), try row.decode("colocationid"), try row.decodeIfPresent("column_name"))
                }
                let users = try #require(byName["users"])
                #expect(users.method == "h" && users.column == "user_id")
                for table in userTables {
                    let entry = byName[table]
                    #expect(entry?.method == "h" && entry?.column == "user_id" && entry?.colocation == users.colocation, "\(table): \(String(describing: entry))")
                }
                for table in Self.referenceTables { #expect(byName[table]?.method == "n", "\(table) is a reference table") }
                // Every monthly partition of usage_events is distributed with its parent.
                let partitions = try await connection.query(
                    """
                    SELECT count(*) AS n, count(d.logicalrelid) AS distributed FROM pg_inherits i
                    LEFT JOIN pg_dist_partition d ON d.logicalrelid = i.inhrelid WHERE i.inhparent = 'usage_events'::regclass
                    """
                ).single()
                #expect(try partitions.decode("n", as: Int.self) > 1)
                #expect(try partitions.decode("n", as: Int.self) == partitions.decode("distributed", as: Int.self))
                // Every function of the schema is on the workers too.
                let local = try await connection.query(
                    """
                    SELECT p.oid::regprocedure::text AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                    WHERE n.nspname = 'public' AND p.proname LIKE 'habitsync\\_%' AND p.prokind = 'f' AND p.proname <> 'habitsync_distribute'
                      AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)
                    """
                ).rows.map { try $0.decode("name", as: String.self) }
                #expect(local.isEmpty, "functions only on the coordinator: \(local)")
            }
            // A second run finds nothing to do.
            #expect(try await DistributionStore(pool: pool).distribute(shardCount: nil).isEmpty)
        }
    }

    /// The request scope reaches the workers as `SET LOCAL` (what `RequestScope` sends, with
    /// `citus.propagate_set_commands = 'local'`), and row-level security holds there: a
    /// query over every shard counts the caller's rows only. Set with `set_config`, the same
    /// scope never reaches the workers, which then show nothing (they fail closed).
    @Test func rowLevelSecurityHoldsOnTheWorkers() async throws {
        let world = try await SyncWorld.make()
        let users = (0..<8).map { "user-\($0)" }
        try await world.serve { server in
            for (n, user) in users.enumerated() {
                let device = try await world.client(server, user: user)
                let changes = (0...n).map { _ in Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit()) }
                #expect(try await device.push(changes).results.allSatisfy { $0["status"] as? String == "applied" })
            }
        }
        let placements = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection {
                try await $0.query("SELECT count(DISTINCT nodeport) AS n FROM citus_shards WHERE table_name = 'habits'::regclass AND shard_size >= 0").single().decode("n", as: Int.self)
            }
        }
        #expect(placements == 2, "habits' shards are on both workers")
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            for (n, user) in users.enumerated() {
                let seen = try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: user)
                    return try await connection.query("SELECT count(*) AS n, count(DISTINCT user_id) AS users FROM habits").single()
                }
                #expect(try seen.decode("n", as: Int.self) == n + 1, "\(user)")
                #expect(try seen.decode("users", as: Int.self) == 1, "\(user)")
            }
            let tenantWide = try await pool.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: world.tenant, userID: nil)
                return try await connection.query("SELECT count(*) AS n FROM habits").single().decode("n", as: Int.self)
            }
            #expect(tenantWide == (1...users.count).reduce(0, +))
            let bySetConfig = try await pool.withTransaction { connection in
                try await connection.query("SELECT set_config('habitsync.tenant_id', \(world.tenant.uuidString.lowercased()), true), set_config('habitsync.user_id', 'user-7', true)")
                return try await connection.query("SELECT count(*) AS n FROM habits").single().decode("n", as: Int.self)
            }
            #expect(bySetConfig == 0, "set_config does not reach the workers")
        }
    }

    /// A request transaction begins with each `SET LOCAL` as a statement of its own
    /// (`PGConnection.commands`). Citus copies a propagated `SET`'s whole text onto the
    /// transaction's worker connections, so sent as one string after `BEGIN`, every worker
    /// answered every request with "there is already a transaction in progress" (20,041
    /// warnings in one run of this target). Sent that old way in the same test, it comes back.
    @Test func aRequestTransactionDrawsNoWarningFromTheWorkers() async throws {
        let world = try await SyncWorld.make()
        let received = Mutex<[PGNotice]>([])
        let sink = PGNoticeSink { notice in received.withLock { $0.append(notice) } }
        let connection = ServerConfiguration.requestConnection(
            connectionString: world.database.connectionString, role: "habitsync_app",
            distributed: true, notices: sink)
        try await PGPool.withPool(.init(connection: connection, maximumConnections: 1), logger: TestPostgres.logger) { pool in
            // Tenant-wide and one user's: both read every shard, on both workers.
            for user in [nil, "alice"] as [String?] {
                let scope = try RequestScope.settings(tenantID: world.tenant, userID: user)
                try await pool.withTransaction(statementTimeout: .seconds(30), localSettings: scope) { connection in
                    try await connection.query("SELECT count(*) AS n FROM habits")
                }
                try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: user)
                    try await connection.query("SELECT count(*) AS n FROM habits")
                }
            }
            // That warning's SQLSTATE (active_sql_transaction). Other notices may come: a busy
            // test cluster, with a database per test, warns that it could not start another
            // Citus maintenance worker.
            let alreadyInATransaction = "25001"
            #expect(!received.withLock { $0 }.contains { $0.sqlState == alreadyInATransaction }, "\(received.withLock { $0 })")
            let scope = try RequestScope.settings(tenantID: world.tenant, userID: "alice")
            try await pool.withConnection { connection in
                try await connection.simpleQuery(unsafeSQL: (["BEGIN"] + scope.map(\.command)).joined(separator: "; "))
                try await connection.query("SELECT count(*) AS n FROM habits")
                try await connection.simpleQuery(unsafeSQL: "COMMIT")
            }
            #expect(received.withLock { $0 }.contains { $0.severity == "WARNING" && $0.sqlState == alreadyInATransaction && $0.message == "there is already a transaction in progress" })
        }
    }

    /// The worker nodes one request's transaction talks to, and whether its commit was two-phase,
    /// as the coordinator itself reports them (`citus.log_remote_commands`: every command it
    /// issues, with the node it went to). Counted on this session only: nothing else moves it.
    struct RemoteCommands: Sendable {
        let nodes: Set<String>
        let twoPhase: Bool
        /// Each command with its notice's detail, which names the node.
        let commands: [String]

        static func node(of command: String) -> String? {
            (try? Regex(#"on server [^@ ]+@([^ ]+) connectionId"#).firstMatch(in: command)).map { String($0.output[1].substring ?? "") }
        }
    }

    static func remoteCommands<T: Sendable>(on world: SyncWorld, _ body: (PGPool) async throws -> T) async throws -> (T, RemoteCommands) {
        let received = Mutex<[PGNotice]>([])
        let sink = PGNoticeSink { notice in received.withLock { $0.append(notice) } }
        var connection = ServerConfiguration.requestConnection(
            connectionString: world.database.connectionString, role: "habitsync_app",
            distributed: true, notices: sink)
        connection.sessionSettings["citus.log_remote_commands"] = "on"
        connection.sessionSettings["client_min_messages"] = "log"
        let value = try await PGPool.withPool(.init(connection: connection, maximumConnections: 1), logger: TestPostgres.logger) { pool in
            // The session's own setup is not the request's: start counting after it.
            try await pool.withConnection { try await $0.query("SELECT 1 AS one") }
            received.withLock { $0.removeAll() }
            return try await body(pool)
        }
        let issued = received.withLock { $0 }.filter { $0.message.hasPrefix("issuing ") }
            .map { String($0.message.prefix(160)) + " " + ($0.detail ?? "") }
        return (
            value,
            RemoteCommands(
                nodes: Set(issued.compactMap(RemoteCommands.node(of:))),
                twoPhase: issued.contains { $0.contains("PREPARE TRANSACTION") }, commands: issued)
        )
    }

    /// A user's first push: a habit (goal 1) and the settings.
    static func firstBatch(habit: UUID) -> [JSON] {
        [
            Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit().merging(["goalCount": 1]) { _, n in n }),
            Wire.change("userSettings", UUID(), at: Wire.at(0), record: Wire.settings()),
        ]
    }

    /// A change of every other collection, and an older write of the habit (superseded: read
    /// back and logged as a conflict). Seven of the eight apply.
    static func everyCollectionBatch(habit: UUID) -> [JSON] {
        [
            Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: Wire.progress(habit: habit, date: LocalDate(Date(), in: TimeZone(identifier: "UTC")!).description, count: 1)),
            Wire.change("reminders", UUID(), at: Wire.at(1), record: Wire.reminder(habit: habit)),
            Wire.change("usageEvents", UUID(), at: Wire.at(1), record: Wire.usageEvent()),
            Wire.change("xpTransactions", UUID(), at: Wire.at(1), record: Wire.xp()),
            Wire.change("achievements", UUID(), at: Wire.at(1), record: Wire.achievement()),
            Wire.change("focusSessions", UUID(), at: Wire.at(1), record: Wire.focus()),
            Wire.change("selectedApps", UUID(), at: Wire.at(1), record: Wire.selectedApp()),
            Wire.change("habits", habit, at: Wire.at(-5), record: Wire.habit()),
        ]
    }

    /// The worker holding `user`'s shards (`host:port`).
    static func worker(of user: String, in world: SyncWorld) async throws -> String {
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT n.nodename || ':' || n.nodeport AS node FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid
                    WHERE p.shardid = get_shard_id_for_distribution_column('users', \(user))
                    """
                ).single().decode("node", as: String.self)
            }
        }
    }

    /// Moves `user`'s shard group from the worker `from` to `to` (`citus_move_shard_placement`
    /// with `mode`: `block_writes`, or `force_logical`, which copies while writes go on).
    static func moveShards(of user: String, from: String, to: String, in world: SyncWorld, mode: String = "block_writes") async throws {
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                let (fromHost, fromPort) = TestPostgres.hostAndPort(from)
                let (toHost, toPort) = TestPostgres.hostAndPort(to)
                try await connection.query(
                    """
                    SELECT citus_move_shard_placement(get_shard_id_for_distribution_column('users', \(user)),
                        \(fromHost), \(fromPort)::integer, \(toHost), \(toPort)::integer, shard_transfer_mode => \(mode)::citus.shard_transfer_mode)
                    """)
            }
        }
    }

    /// Issue 30: a user's push, pull (with a derived-state recompute), statistics and export
    /// each talk to that user's worker only, and commit there in one phase. Before, a push
    /// copied intermediate results to the other worker and committed on both with `PREPARE
    /// TRANSACTION`, so one worker down stopped every user's pushes; the focus and usage
    /// statistics read every worker.
    @Test func eachOfAUsersRequestsTalksToThatUsersWorkerOnly() async throws {
        let world = try await SyncWorld.make()
        let identity = VerifiedIdentity.trusted(tenantID: world.tenant, userID: "alice")
        let home = try await Self.worker(of: "alice", in: world)
        let timeout = ServerConfiguration.forTests.statementTimeout
        let habit = UUID()
        let later = Date().addingTimeInterval(3 * 86_400)  // a later day: the pull recomputes
        var report: [(String, RemoteCommands)] = []
        func run(_ name: String, _ body: (PGPool) async throws -> Void) async throws {
            let (_, commands) = try await Self.remoteCommands(on: world, body)
            report.append((name, commands))
        }
        try await run("first push") { pool in
            _ = try await StorePush.results(Self.firstBatch(habit: habit), through: PushStore(pool: pool, statementTimeout: timeout), as: identity)
        }
        try await run("push of every collection") { pool in
            let results = try await StorePush.results(Self.everyCollectionBatch(habit: habit), through: PushStore(pool: pool, statementTimeout: timeout), as: identity)
            #expect(results.filter { $0["status"] as? String == "applied" }.count == 7, "\(results)")
        }
        try await run("pull with a recompute") { pool in
            _ = try await PullStore(pool: pool, statementTimeout: timeout)
                .pull(identity: identity, after: nil, limit: 500, collections: SyncCollection.allCases, now: later)
        }
        try await run("statistics") { pool in
            let stats = StatsStore(pool: pool, statementTimeout: timeout)
            let today = try await stats.today(identity, now: later)
            _ = try await stats.habitStats(identity, from: today, to: today)
            _ = try await stats.focusStats(identity)
            _ = try await stats.usageStats(identity)
        }
        try await run("export") { pool in
            _ = try await AccountStore(pool: pool, statementTimeout: timeout).export(tenant: world.tenant, user: "alice") { _ in }
        }
        // An erasure is two transactions: the marker goes into `erased_users`, a reference
        // table, so it is written on every node (deploy/README.md says why); the deletion that
        // follows, the part that grows with the account, must be the user's worker's alone.
        let (_, erasure) = try await Self.remoteCommands(on: world) { pool in
            try await AccountStore(pool: pool, statementTimeout: timeout).eraseUser(tenant: world.tenant, user: "alice")
        }
        let markerEnds = erasure.commands.lastIndex { $0.contains("COMMIT PREPARED") }
        #expect(markerEnds != nil, "the marker's two-phase commit: \(erasure.commands.joined(separator: "\n"))")
        let deletion = Array(erasure.commands[((markerEnds ?? -1) + 1)...])
        #expect(deletion.contains { $0.contains("DELETE") }, "\(erasure.commands.joined(separator: "\n"))")
        report.append(
            (
                "erasure after its marker",
                RemoteCommands(
                    nodes: Set(deletion.compactMap(RemoteCommands.node(of:))),
                    twoPhase: deletion.contains { $0.contains("PREPARE TRANSACTION") }, commands: deletion)
            ))
        for (name, commands) in report {
            print("Citus: \(name): workers \(commands.nodes.sorted()), two-phase commit \(commands.twoPhase), \(commands.commands.count) remote commands")
            #expect(commands.nodes == [home], "\(name): \(commands.commands.joined(separator: "\n"))")
            #expect(!commands.twoPhase, "\(name): \(commands.commands.joined(separator: "\n"))")
        }
    }

    /// Every statement one user's push, pull and derived-state recompute send, explained with
    /// the binds they were sent with: none may touch more than one shard.
    @Test func oneUsersPushPullAndRecomputeTouchOneShard() async throws {
        let world = try await SyncWorld.make()
        let identity = VerifiedIdentity.trusted(tenantID: world.tenant, userID: "alice")
        let statements = try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            let push = PushStore(pool: pool, statementTimeout: ServerConfiguration.forTests.statementTimeout)
            let pull = PullStore(pool: pool, statementTimeout: ServerConfiguration.forTests.statementTimeout)
            let habit = UUID()
            _ = try await StorePush.results(Self.firstBatch(habit: habit), through: push, as: identity)
            pool.roundTrips.startRecording()
            let changes = Self.everyCollectionBatch(habit: habit)
            let results = try await StorePush.results(changes, through: push, as: identity)
            #expect(results.filter { $0["status"] as? String == "applied" }.count == changes.count - 1, "\(results)")
            _ = try await pull.pull(
                identity: identity, after: nil, limit: 500, collections: SyncCollection.allCases,
                now: Date().addingTimeInterval(3 * 86_400))  // a later day: the pull recomputes
            return pool.roundTrips.stopRecording()
        }
        #expect(statements.count > 20)
        try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            var multiShard: [String] = []
            var explained = 0
            var typeNames: [PGTypeOID: String] = [:]
            for statement in statements {
                // Everything but the savepoints of the slow path can be explained.
                let firstWord = statement.sql.split(whereSeparator: { $0.isWhitespace }).first.map { $0.uppercased() } ?? ""
                guard !["SAVEPOINT", "RELEASE", "ROLLBACK"].contains(firstWord) else { continue }
                // Explained with its values written in as typed literals: EXPLAIN of a statement
                // with binds (or of a prepared one) is planned generically, which Citus cannot
                // do for some push statements the server runs with custom plans.
                var literals: [String] = []
                for bind in statement.binds {
                    guard let bytes = bind.bytes else { literals.append("NULL"); continue }
                    let text = bind.isBinary ? "\\x" + bytes.map { String(format: "%02x", $0) }.joined() : String(decoding: bytes, as: UTF8.self)
                    if bind.type != .unspecified, typeNames[bind.type] == nil {
                        typeNames[bind.type] = try await pool.withConnection {
                            try await $0.query("SELECT \(Int64(bind.type.rawValue))::oid::regtype::text AS name").single().decode("name", as: String.self)
                        }
                    }
                    literals.append("(" + PGQuery.quoteLiteral(text) + (typeNames[bind.type].map { "::" + $0 } ?? "") + ")")
                }
                let sql = try Regex(#"\$([0-9]+)"#)
                let written = statement.sql.replacing(sql) { match in
                    Int(match.output[1].substring ?? "").flatMap { literals.indices.contains($0 - 1) ? literals[$0 - 1] : nil } ?? String(match.output[0].substring ?? "")
                }
                let plan = try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "alice")
                    return try await connection.simpleQuery(unsafeSQL: "EXPLAIN (COSTS OFF) " + written).rows
                        .map { try $0.decode(at: 0, as: String.self) }.joined(separator: "\n")
                }
                explained += 1
                let taskCounts = plan.split(separator: "\n").compactMap { line -> Int? in
                    guard let range = line.range(of: "Task Count: ") else { return nil }
                    return Int(line[range.upperBound...].prefix { $0.isNumber })
                }
                if taskCounts.contains(where: { $0 > 1 }) { multiShard.append("\(statement.sql)\n\(plan)") }
            }
            print("Citus: \(explained) statements of one user's push, pull and recompute explained; \(multiShard.count) touch more than one shard")
            #expect(explained > 20)
            #expect(multiShard.isEmpty, "\(multiShard.joined(separator: "\n\n"))")
        }
    }

    /// `distribute` on a database that is already in use: every row arrives once (each
    /// table's rows compared one by one, reference tables and archived months included), the
    /// derived state is not counted again by the triggers, the coordinator keeps no local copy,
    /// and the server goes on serving the same data (pulls unchanged, pushes, an erased
    /// account still refused, an erasure, a recompute).
    @Test func aPopulatedDatabaseIsDistributedWithEveryRowOnceAndServesOn() async throws {
        let world = try await SyncWorld.make(on: try await TestPostgres.shared.undistributedDatabase())
        let now = Date()
        let users = ["alice", "bob", "dave"]
        var pulled: [String: [JSON]] = [:]
        try await world.serve { server in
            for (n, user) in users.enumerated() {
                try await AccountFixture.fill(try await world.client(server, user: user), eventDays: 20 + 20 * n, now: now)
            }
            let carol = try await world.client(server, user: "carol")
            try await AccountFixture.fill(carol, eventDays: 3, now: now)
            #expect(try await TestHTTP.request("DELETE", server.baseURL + "/v1/account", headers: ["Authorization": "Bearer \(carol.token)"]).status == 200)
            let archived = try await world.database.withPool(size: 1) { pool in
                try await MaintenanceStore(pool: pool).run(retention: .init(tombstones: 90 * 86_400, pushBatches: 90 * 86_400, conflicts: 90 * 86_400, usageEvents: 10 * 86_400))
            }
            #expect(!archived.partitionsArchived.isEmpty)
            for user in users { pulled[user] = try await world.client(server, user: user).pullAll().changes }
        }
        let before = try await Self.digests(world)
        let bobsXP = Int64(try await world.count("xp_transactions", where: "user_id = 'bob'"))
        #expect(before["public.users"]?.rows == 3 && before["public.erased_users"]?.rows == 1, "\(before)")
        #expect(before.keys.contains { $0.hasPrefix("archive.") }, "\(before.keys.sorted())")

        let distributed = try await HabitSyncBinary.run(["distribute", "--shard-count", "4"], environment: ["DATABASE_URL": world.database.connectionString])
        #expect(distributed.status == 0, "\(distributed.stderr)")
        print("CitusTests: distribute on a populated database:\n\(distributed.stdout)")
        let after = try await Self.digests(world)
        #expect(
            after == before,
            "rows changed: \(Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted().map { "\($0): \(String(describing: before[$0])) → \(String(describing: after[$0]))" })")
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                // Nothing is left undistributed (but the coordinator's migration history), and
                // the coordinator's local copies are empty.
                let local = try await connection.query(
                    """
                    SELECT c.oid::regclass::text AS name, pg_relation_size(c.oid) AS bytes,
                           EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid) AS distributed
                    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname IN ('public', 'archive') AND c.relkind = 'r' AND c.relname <> 'habitsync_schema_migrations'
                    """
                ).rows
                for row in local {
                    let name = try row.decode("name", as: String.self)
                    #expect(try row.decode("distributed", as: Bool.self), "\(name) is not distributed")
                    #expect(try row.decode("bytes", as: Int64.self) == 0, "\(name) keeps a local copy on the coordinator")
                }
                #expect(local.count > 20)
                // The triggers are back, on the shards too.
                let triggers = try await connection.query(
                    """
                    SELECT count(*) AS n FROM run_command_on_shards('xp_transactions',
                        $$SELECT count(*) FROM pg_trigger WHERE tgrelid = '%s'::regclass AND NOT tgisinternal$$) WHERE result::int > 0
                    """
                ).single().decode("n", as: Int.self)
                #expect(triggers == TestPostgres.citusShardCount)
            }
        }
        for user in users {
            let (incremental, full) = try await world.database.withPool(size: 1) {
                try await DerivedStateAudit(pool: $0).compare(tenant: world.tenant, user: user)
            }
            #expect(incremental == full, "\(user): the derived state differs from a recompute after distribution")
        }

        try await world.serve { server in
            for user in users {
                let again = try await world.client(server, user: user).pullAll().changes
                #expect(again.count == pulled[user]?.count && NSArray(array: again).isEqual(to: pulled[user] ?? []), "\(user)'s pull changed")
            }
            let alice = try await world.client(server, user: "alice")
            let xp = try await alice.push([Wire.change("xpTransactions", UUID(), at: Wire.at(5), record: Wire.xp(amount: 7))])
            #expect(xp.status(0) == "applied")
            let carol = try await world.client(server, user: "carol")
            #expect(try await carol.pull().errorCode == "account_erased")
            let bob = try await world.client(server, user: "bob")
            #expect(try await TestHTTP.request("DELETE", server.baseURL + "/v1/account", headers: ["Authorization": "Bearer \(bob.token)"]).status == 200)
        }
        let end = try await Self.digests(world)
        #expect(end["public.xp_transactions"]?.rows == (before["public.xp_transactions"]?.rows ?? 0) + 1 - bobsXP)
        let (incremental, full) = try await world.database.withPool(size: 1) {
            try await DerivedStateAudit(pool: $0).compare(tenant: world.tenant, user: "alice")
        }
        #expect(incremental == full, "alice: the derived state after a push on the distributed database differs from a recompute")
        #expect(try await world.count("users", where: "user_id = 'bob'") == 0)
    }

    /// A worker is added while devices push, and the shards are rebalanced onto it with
    /// `block_writes` (deploy/README.md, "Adding a worker"): a push whose shard is being moved
    /// waits, or past its statement timeout gets `503` with nothing applied, and its retry of
    /// the same batch is applied; nothing else fails and nothing is lost. How many pushes
    /// overlapped the move depends on the machine's speed: printed, not asserted.
    @Test(.enabled(if: TestPostgres.citusSpareNode != nil, "needs a spare node: scripts/test-citus"))
    func addingAWorkerAndRebalancingKeepsTheServerServing() async throws {
        let world = try await SyncWorld.make()
        let (host, port) = try await TestPostgres.shared.prepareSpareNode(for: world.database)
        let users = (0..<4).map { "pusher-\($0)" }
        let flags = MoveFlags()
        var configuration = ServerConfiguration.forTests
        configuration.statementTimeout = .seconds(2)  // a shard copy outlasts it: the 503 path is taken
        struct Pushed: Sendable { var ids: [String: Set<String>] = [:]; var pushes = 0, duringMove = 0, unavailable = 0, other: [Int] = [] }
        let (pushed, moved, seconds) = try await world.serve(configuration) { server in
            try await withThrowingTaskGroup(of: Pushed.self) { group in
                for user in users {
                    let device = try await world.client(server, user: user)
                    group.addTask {
                        var mine = Pushed()
                        let habit = UUID()
                        // Until the move is over, and at least a few pushes after it.
                        var after = 0
                        while after < 3 {
                            if flags.finished.load(ordering: .acquiring) { after += 1 }
                            var changes = [Wire.change("habits", habit, at: Wire.at(Double(mine.pushes)), record: Wire.habit(name: "Edit \(mine.pushes)"))]
                            for _ in 0..<8 {
                                changes.append(
                                    Wire.change(
                                        ["usageEvents", "xpTransactions"][changes.count % 2], UUID(), at: Wire.at(0),
                                        record: changes.count % 2 == 0 ? Wire.usageEvent() : Wire.xp(amount: 3)))
                            }
                            let batch = UUID()
                            var attempts = 0
                            while true {
                                attempts += 1
                                let reply = try await device.push(changes, batchID: batch, allowUnavailable: true)
                                if flags.rebalancing.load(ordering: .acquiring) { mine.duringMove += 1 }
                                if reply.status == 200 {
                                    #expect(reply.results.allSatisfy { $0["status"] as? String == "applied" }, "\(reply.results)")
                                    break
                                }
                                if reply.status == 503 { mine.unavailable += 1 } else { mine.other.append(reply.status) }
                                guard attempts < 200 else { Issue.record("\(user): a batch was not applied after 200 attempts"); break }
                                try await Task.sleep(for: .milliseconds(50))
                            }
                            mine.pushes += 1
                            for change in changes {
                                mine.ids[change["collection"] as? String ?? "", default: []].insert((change["id"] as? String ?? "").lowercased())
                            }
                        }
                        return mine
                    }
                }
                let started = ContinuousClock.now
                let moved = try await world.database.withPool(size: 1) { pool in
                    try await pool.withConnection { connection in
                        try await connection.query("SELECT citus_add_node(\(host), \(port)::integer)")
                        flags.rebalancing.store(true, ordering: .releasing)
                        try await connection.query("SELECT rebalance_table_shards(shard_transfer_mode => 'block_writes')")
                        flags.rebalancing.store(false, ordering: .releasing)
                        return try await connection.query("SELECT count(*) AS n FROM citus_shards WHERE nodeport = \(port)::integer").single().decode("n", as: Int.self)
                    }
                }
                let seconds = Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000
                flags.finished.store(true, ordering: .releasing)
                var all = Pushed()
                for try await one in group {
                    for (collection, ids) in one.ids { all.ids[collection, default: []].formUnion(ids) }
                    all.pushes += one.pushes
                    all.duringMove += one.duringMove
                    all.unavailable += one.unavailable
                    all.other += one.other
                }
                // Every user's pushes, and only theirs, are pulled back from the moved shards.
                var pulledBack = 0
                for user in users {
                    let pulled = try await world.client(server, user: user).pullAll().changes
                    pulledBack += pulled.filter { ["usageEvents", "xpTransactions", "habits"].contains($0["collection"] as? String ?? "") }.count
                }
                #expect(pulledBack == all.ids.values.map(\.count).reduce(0, +))
                return (all, moved, seconds)
            }
        }
        print(
            "CitusTests: a worker added and \(moved) shards moved to it with block_writes in \(String(format: "%.1f", seconds)) s; \(pushed.pushes) batches pushed and applied; \(pushed.duringMove) answers came during the move; \(pushed.unavailable) answers were 503, each batch applied on its retry"
        )
        #expect(moved > 0, "no shard moved to the new worker")
        #expect(pushed.other.isEmpty, "answers other than 200 and 503: \(pushed.other)")
        for user in users {
            let (incremental, full) = try await world.database.withPool(size: 1) {
                try await DerivedStateAudit(pool: $0).compare(tenant: world.tenant, user: user)
            }
            #expect(incremental == full, "\(user): derived state after the move differs from a recompute")
        }
    }

    /// Where the rebalancing test is, read by its pushing tasks.
    final class MoveFlags: Sendable {
        let rebalancing = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)
    }

    struct TableDigest: Equatable, CustomStringConvertible {
        let rows: Int64
        let digest: String
        var description: String { "\(rows) rows \(digest.prefix(8))" }
    }

    /// Every table that holds rows of users or tenants (partitioned ones as a whole), its
    /// row count and a digest of its rows in order.
    static func digests(_ world: SyncWorld) async throws -> [String: TableDigest] {
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                let tables = try await connection.query(
                    """
                    SELECT n.nspname || '.' || c.relname AS name, c.oid::regclass::text AS relation
                    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname IN ('public', 'archive') AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                      AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname IN ('tenant_id', 'user_id') AND NOT a.attisdropped)
                       OR c.relname = 'tenants' AND n.nspname = 'public'
                    ORDER BY 1
                    """
                ).rows
                var digests: [String: TableDigest] = [:]
                for table in tables {
                    let relation = try table.decode("relation", as: String.self)
                    let row = try await connection.query(PGQuery(unsafeSQL: "SELECT count(*) AS n, coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') AS digest FROM \(relation) t")).single()
                    digests[try table.decode("name", as: String.self)] = TableDigest(rows: try row.decode("n", as: Int64.self), digest: try row.decode("digest", as: String.self))
                }
                return digests
            }
        }
    }
}
