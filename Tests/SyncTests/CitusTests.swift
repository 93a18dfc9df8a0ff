import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import Testing
import TestSupport

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
                let userTables = try await connection.query("""
                    SELECT DISTINCT (CASE WHEN c.relispartition THEN pg_partition_root(c.oid) ELSE c.oid END)::regclass::text AS name
                    FROM habitsync_user_tables() u JOIN pg_class c ON c.oid = u.relation ORDER BY 1
                    """).rows.map { try $0.decode("name", as: String.self) }
                #expect(userTables.count >= 20, "\(userTables)")
                let layout = try await connection.query("""
                    SELECT logicalrelid::text AS name, partmethod::text AS method, colocationid,
                           CASE WHEN partmethod = 'h' THEN column_to_column_name(logicalrelid, partkey) END AS column_name
                    FROM pg_dist_partition
                    """).rows
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
                let partitions = try await connection.query("""
                    SELECT count(*) AS n, count(d.logicalrelid) AS distributed FROM pg_inherits i
                    LEFT JOIN pg_dist_partition d ON d.logicalrelid = i.inhrelid WHERE i.inhparent = 'usage_events'::regclass
                    """).single()
                #expect(try partitions.decode("n", as: Int.self) > 1)
                #expect(try partitions.decode("n", as: Int.self) == partitions.decode("distributed", as: Int.self))
                // Every function of the schema is on the workers too.
                let local = try await connection.query("""
                    SELECT p.oid::regprocedure::text AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                    WHERE n.nspname = 'public' AND p.proname LIKE 'habitsync\\_%' AND p.prokind = 'f' AND p.proname <> 'habitsync_distribute'
                      AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)
                    """).rows.map { try $0.decode("name", as: String.self) }
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

    /// Every statement one user's push, pull and derived-state recompute send, explained with
    /// the binds they were sent with: none may touch more than one shard.
    @Test func oneUsersPushPullAndRecomputeTouchOneShard() async throws {
        let world = try await SyncWorld.make()
        let identity = VerifiedIdentity.trusted(tenantID: world.tenant, userID: "alice")
        let statements = try await world.database.withPool(size: 1, role: "habitsync_app") { pool in
            let push = PushStore(pool: pool, statementTimeout: ServerConfiguration.forTests.statementTimeout)
            let pull = PullStore(pool: pool, statementTimeout: ServerConfiguration.forTests.statementTimeout)
            let habit = UUID()
            let first: [JSON] = [
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit().merging(["goalCount": 1]) { _, n in n }),
                Wire.change("userSettings", UUID(), at: Wire.at(0), record: Wire.settings()),
            ]
            _ = try await IdempotencyTests.push(first, through: push, as: identity)
            pool.roundTrips.startRecording()
            let session = UUID()
            let changes: [JSON] = [
                Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: Wire.progress(habit: habit, date: DerivedStateSyncTests.today.description, count: 1)),
                Wire.change("reminders", UUID(), at: Wire.at(1), record: Wire.reminder(habit: habit)),
                Wire.change("usageEvents", UUID(), at: Wire.at(1), record: Wire.usageEvent()),
                Wire.change("xpTransactions", UUID(), at: Wire.at(1), record: Wire.xp()),
                Wire.change("achievements", UUID(), at: Wire.at(1), record: Wire.achievement()),
                Wire.change("focusSessions", session, at: Wire.at(1), record: Wire.focus()),
                Wire.change("selectedApps", UUID(), at: Wire.at(1), record: Wire.selectedApp()),
                Wire.change("habits", habit, at: Wire.at(-5), record: Wire.habit()),  // superseded: read back and logged
            ]
            let results = try await IdempotencyTests.push(changes, through: push, as: identity)
            #expect(results.filter { $0["status"] as? String == "applied" }.count == changes.count - 1, "\(results)")
            _ = try await pull.pull(identity: identity, after: nil, limit: 500, collections: SyncCollection.allCases,
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
}
