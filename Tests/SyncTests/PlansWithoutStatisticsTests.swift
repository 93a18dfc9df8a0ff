import Foundation
import HabitSyncDomain
import HabitSyncServer
import LibPQClient
import TestSupport
import Testing

@testable import HabitSyncAuth
@testable import HabitSyncStore

/// A ten-year user's push and pull read the days they need, not the user's history, before the
/// first `ANALYZE` and after one that saw only a newcomer (issue 29, BENCHMARKS.md "The push
/// engine"): the server's own
/// statements, prepared on a request session while the table was small (the plans a pooled
/// connection keeps), then run for a user with 36,500 days. Counted by the heap rows the
/// transaction's index scans fetched (`pg_stat_xact_user_tables`), not by time.
@Suite struct PlansWithoutStatisticsTests {
    static let habitsPerUser = 10
    /// The last day seeded (fixed: the test does not depend on the date it runs).
    static let lastDay = LocalDate("2026-11-20") ?? LocalDate(dayNumber: 0)

    /// Inserts `days` days of progress for each of ten habits, as the tables' owner.
    static func seed(_ pool: PGPool, tenant: UUID, user: String, days: Int, habits: [UUID]) async throws {
        try await pool.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            try await connection.query("INSERT INTO users (tenant_id, user_id) VALUES (\(tenant), \(user))")
            try await connection.query(
                """
                INSERT INTO habits (tenant_id, user_id, id, name, habit_description, icon, habit_type, goal_count, goal_unit, schedule_type,
                                    start_date, created_at, updated_at, updated_by, server_version)
                SELECT \(tenant), \(user), h.id, 'Habit ' || h.n, '', 'star', 'formation', 1, 'times', 'daily', \(lastDay.description)::date - \(days)::int, now(), now(), 'seed', h.n
                FROM unnest(\(habits)::uuid[]) WITH ORDINALITY AS h(id, n)
                """)
            try await connection.query(
                """
                INSERT INTO daily_progress (tenant_id, user_id, id, habit_id, date, progress_count, goal_count, timestamps, updated_at, updated_by, server_version)
                SELECT \(tenant), \(user), gen_random_uuid(), h.id, \(lastDay.description)::date - d::int, 1, 1, ARRAY[now()]::timestamptz(3)[], now(), 'seed',
                       \(habits.count) + d * \(habits.count) + h.n
                FROM unnest(\(habits)::uuid[]) WITH ORDINALITY AS h(id, n), generate_series(0, \(days - 1)::int) d
                """)
        }
    }

    /// The statements a push and a pull run on daily_progress by key, for `user`.
    static func reads(tenant: UUID, user: String, habits: [UUID], latestVersion: Int64) -> [PGQuery] {
        let today = lastDay
        let dayNumber = today.dayNumber
        return [
            PushBatch.storedProgressDays(tenant: tenant, user: user, ids: [UUID(), UUID()], habits: [habits[0]], dates: [today]),
            DerivedStateQueries.progress(tenant: tenant, user: user, habits: habits, in: [(dayNumber - 1)...dayNumber]),
            PullPageSQL.page([.dailyProgress], tenant: tenant, user: user, after: max(latestVersion - 5, 0), limit: 10, tombstoneFloor: 0, selection: .all, window: nil),
            // A first sync's recent phase and a windowed device's digests read their days only
            // (migration 0041): here the last two.
            PullPageSQL.page(
                [.dailyProgress], tenant: tenant, user: user, after: 0, limit: 10, tombstoneFloor: latestVersion,
                selection: .recent(from: today.adding(days: -1)), window: nil),
            PullPageSQL.windowDigests([.dailyProgress], tenant: tenant, user: user, window: today.adding(days: -1)) ?? "SELECT",
        ]
    }

    /// What the veteran's reads returned and cost in their transaction.
    struct Readings {
        /// Rows each read returned.
        let rows: [Int]
        /// Heap rows the transaction's index scans fetched from the tables read.
        let fetched: Int64
        /// Rows it read by sequential scans of them.
        let scanned: Int64
    }

    /// One request session, as a pooled server connection: it prepares `reads` for the
    /// newcomer while the tables are small and keeps those plans; `seedVeteran` then gives the
    /// veteran a long history and the veteran's reads run on the same session. Counted from
    /// `pg_stat_xact_user_tables` for the tables whose name is LIKE `tables`.
    static func readingsAfterAHistoryArrives(
        _ database: TestDatabase, tenant: UUID, tables: String,
        newcomerReads: () async throws -> [PGQuery],
        seedVeteran: () async throws -> Void,
        veteranReads: () async throws -> [PGQuery]
    ) async throws -> Readings {
        let request = ServerConfiguration.requestConnection(connectionString: database.connectionString, role: "habitsync_app")
        return try await PGPool.withPool(.init(connection: request, maximumConnections: 1), logger: TestPostgres.logger) { requests in
            let prepared = try await newcomerReads()
            try await requests.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: "newcomer")
                for query in prepared { _ = try await connection.query(query) }
            }
            try await seedVeteran()
            let reads = try await veteranReads()
            return try await requests.withTransaction { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: "veteran")
                var rows: [Int] = []
                for query in reads { rows.append(try await connection.query(query).rows.count) }
                let counts = try await connection.query(
                    """
                    SELECT coalesce(sum(idx_tup_fetch), 0)::int8 AS fetched, coalesce(sum(seq_tup_read), 0)::int8 AS scanned
                    FROM pg_stat_xact_user_tables WHERE relname LIKE \(tables)
                    """
                ).single()
                return Readings(rows: rows, fetched: try counts.decode("fetched", as: Int64.self), scanned: try counts.decode("scanned", as: Int64.self))
            }
        }
    }

    /// What the planner knows when the request session prepares its statements.
    enum Statistics: String, CaseIterable, Sendable {
        /// Never analysed (a young or restored database).
        case none
        /// Analysed while the newcomer was the only user: every row has the same `user_id`, so a
        /// plan made from them expects a user to own the whole table and scans it.
        case ofTheNewcomerOnly
    }

    @Test(arguments: Statistics.allCases)
    func keyedReadsOfALongHistoryFetchOnlyTheirRows(statistics: Statistics) async throws {
        // On Citus every request plan is a custom one made on the workers' shards.
        guard !TestPostgres.onCitus else { return }
        let database = try await TestPostgres.shared.migratedDatabase()
        let tenant = UUID()
        let newcomer = (user: "newcomer", habits: (0..<Self.habitsPerUser).map { _ in UUID() })
        let veteran = (user: "veteran", habits: (0..<Self.habitsPerUser).map { _ in UUID() })
        let veteranDays = 3650
        try await database.withPool(size: 1) { owner in
            try await owner.withConnection { connection in
                // The only analysis is the test's own: autovacuum must not run one in between
                // (a busy machine gives it time to).
                try await connection.query("ALTER TABLE daily_progress SET (autovacuum_enabled = false)")
                try await connection.query("INSERT INTO tenants (id, name, daily_completion_xp) VALUES (\(tenant), 'plans', 10)")
            }
            try await Self.seed(owner, tenant: tenant, user: newcomer.user, days: 7, habits: newcomer.habits)
            if statistics == .ofTheNewcomerOnly {
                try await owner.withConnection { try await $0.query("ANALYZE daily_progress") }
            }
            let readings = try await Self.readingsAfterAHistoryArrives(
                database, tenant: tenant, tables: "daily_progress",
                newcomerReads: { Self.reads(tenant: tenant, user: newcomer.user, habits: newcomer.habits, latestVersion: 80) },
                seedVeteran: { try await Self.seed(owner, tenant: tenant, user: veteran.user, days: veteranDays, habits: veteran.habits) },
                veteranReads: { Self.reads(tenant: tenant, user: veteran.user, habits: veteran.habits, latestVersion: Int64(Self.habitsPerUser * (veteranDays + 1))) })
            // Today's day of one habit; two days of ten habits; the page's last five versions; a
            // recent page of ten of the last two days' twenty; their digest.
            #expect(readings.rows == [1, 20, 5, 10, 1])
            // Those 66 rows, not the veteran's 36,500 (what the reads fetched before migration 0028).
            // (Measured: 132, twice the 66 rows, as the first three alone fetch 52 for their 26.)
            #expect(readings.fetched <= 300, "index scans fetched \(readings.fetched) rows")
            // No sequential scan (475,410 rows read with the newcomer's statistics before
            // request sessions turned them off).
            #expect(readings.scanned == 0, "sequential scans read \(readings.scanned) rows")
        }
    }

    /// A page in version order never reads through an index by day, whatever the planner
    /// believes: with every other index of the tables gone and sequential scans off, its plan
    /// has no index left to choose, while the recent phase's page (the control) still takes
    /// its index by day. Before migration 0044 a page's `server_version > 0` implied those
    /// indexes' predicate, and without statistics a page sometimes read and sorted a ten-year
    /// user's every day through one (36,561 rows fetched in `keyedReadsOfALongHistory…`).
    @Test func pagesInVersionOrderCannotChooseTheIndexesByDay() async throws {
        guard !TestPostgres.onCitus else { return }
        let database = try await TestPostgres.shared.migratedDatabase()
        let tenant = UUID()
        let indexesByDay: [(collection: SyncCollection, table: String, index: String)] = [
            (.dailyProgress, "daily_progress", "daily_progress_by_day"),
            (.xpTransactions, "xp_transactions", "xp_transactions_by_time"),
            (.focusSessions, "focus_sessions", "focus_sessions_by_start"),
        ]
        let recentFrom = Self.lastDay.adding(days: -34)
        try await database.withPool(size: 1) { owner in
            try await owner.withConnection { connection in
                for (_, table, index) in indexesByDay {
                    let constraints = try await connection.query(
                        "SELECT conname FROM pg_constraint WHERE conrelid = \(table)::regclass AND contype IN ('p', 'u', 'x')")
                    for row in constraints.rows {
                        let name = PGQuery.quoteIdentifier(try row.decode("conname", as: String.self))
                        try await connection.query(PGQuery(unsafeSQL: "ALTER TABLE \(table) DROP CONSTRAINT \(name) CASCADE"))
                    }
                    let others = try await connection.query(
                        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = \(table)::regclass AND c.relname <> \(index)")
                    for row in others.rows {
                        try await connection.query(PGQuery(unsafeSQL: "DROP INDEX \(PGQuery.quoteIdentifier(try row.decode("relname", as: String.self)))"))
                    }
                }
                try await connection.query("SET enable_seqscan = off")
                func plan(_ query: PGQuery) async throws -> String {
                    var explain: PGQuery = "EXPLAIN "
                    explain.append(query)
                    return try await connection.query(explain).rows.map { try $0.decode("QUERY PLAN", as: String.self) }.joined(separator: "\n")
                }
                for (collection, _, index) in indexesByDay {
                    func page(after: Int64, _ selection: PullPageSQL.Selection, window: LocalDate? = nil) -> PGQuery {
                        PullPageSQL.page([collection], tenant: tenant, user: "u", after: after, limit: 10, tombstoneFloor: 0, selection: selection, window: window)
                    }
                    let inVersionOrder = [
                        page(after: 0, .all), page(after: 36_000, .all), page(after: 0, .all, window: Self.lastDay.adding(days: -90)),
                        page(after: 0, .history(recentFrom: recentFrom, boundary: 36_000)),
                    ]
                    for query in inVersionOrder {
                        let chosen = try await plan(query)
                        #expect(!chosen.contains(index), "\(collection) page in version order chose \(index):\n\(chosen)")
                    }
                    let recent = try await plan(page(after: 0, .recent(from: recentFrom)))
                    #expect(recent.contains(index), "\(collection) recent page did not choose \(index):\n\(recent)")
                }
            }
        }
    }

    /// A week's statistics of a user with 300 daily habits and 200 days of history read that
    /// week's 2,100 habit-days, whatever the planner believes. CI once timed out (10 s) on
    /// 1,000 habits' month: estimated at a row, the habits were joined a second time in a loop
    /// over themselves (500,000 rows for 1,000 habits), and the day's progress could be read by
    /// (tenant, user) alone, the user's whole history (migration 0038).
    @Test(arguments: Statistics.allCases)
    func statisticsOfAWeekFetchThatWeeksHabitDays(statistics: Statistics) async throws {
        // On Citus the statistics functions run on the coordinator, each statement planned anew.
        guard !TestPostgres.onCitus else { return }
        let database = try await TestPostgres.shared.migratedDatabase()
        let tenant = UUID()
        let newcomer = (user: "newcomer", habits: (0..<Self.habitsPerUser).map { _ in UUID() })
        let veteran = (user: "veteran", habits: (0..<300).map { _ in UUID() })
        let week = Self.lastDay.adding(days: -6)...Self.lastDay
        func reads(_ user: String) -> [PGQuery] {
            let identity = VerifiedIdentity(tenantID: tenant, userID: user, expiresAt: Date())
            return [
                StatsStore.habitDays(identity, from: week.lowerBound, to: week.upperBound),
                StatsStore.habits(identity, from: week.lowerBound, to: week.upperBound),
                StatsStore.days(identity, from: week.lowerBound, to: week.upperBound),
            ]
        }
        try await database.withPool(size: 1) { owner in
            try await owner.withConnection { connection in
                for table in ["habits", "users", "daily_progress"] {
                    try await connection.query(PGQuery(unsafeSQL: "ALTER TABLE \(table) SET (autovacuum_enabled = false)"))
                }
                try await connection.query("INSERT INTO tenants (id, name, daily_completion_xp) VALUES (\(tenant), 'plans', 10)")
            }
            try await Self.seed(owner, tenant: tenant, user: newcomer.user, days: 7, habits: newcomer.habits)
            if statistics == .ofTheNewcomerOnly {
                try await owner.withConnection { connection in
                    for table in ["habits", "users", "daily_progress"] { try await connection.query(PGQuery(unsafeSQL: "ANALYZE \(table)")) }
                }
            }
            let readings = try await Self.readingsAfterAHistoryArrives(
                database, tenant: tenant, tables: "%",
                newcomerReads: { reads(newcomer.user) },
                seedVeteran: { try await Self.seed(owner, tenant: tenant, user: veteran.user, days: 200, habits: veteran.habits) },
                veteranReads: { reads(veteran.user) })
            #expect(readings.rows == [1, 1, 1])
            // Each of the three reads the 300 habits and at most the week's 2,100 records: about
            // 6,000 rows. Before 0038: 126 million (each habit-day's probe read the veteran's
            // 60,000 records by the primary key's prefix).
            #expect(readings.fetched + readings.scanned <= 10_000, "fetched \(readings.fetched), scanned \(readings.scanned) rows")
        }
    }

    /// Inserts `count` usage events of `user`, 40 minutes apart back from `lastDay`, into the
    /// monthly partitions and the registry, as the tables' owner.
    static func seedUsageEvents(_ pool: PGPool, tenant: UUID, user: String, count: Int) async throws {
        try await pool.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            try await connection.query(
                """
                WITH e AS (
                    SELECT gen_random_uuid() AS id, \(lastDay.description)::timestamptz - g * interval '40 minutes' AS at, g
                    FROM generate_series(1, \(count)::int) g),
                registered AS (
                    INSERT INTO usage_event_ids (tenant_id, user_id, id, occurred_at, is_exit) SELECT \(tenant), \(user), id, at, false FROM e)
                INSERT INTO usage_events (tenant_id, user_id, id, event_type, occurred_at, pause_duration, timer_duration, updated_at, updated_by, server_version)
                SELECT \(tenant), \(user), id, 'deepen_pause', at, 1, 10, now(), 'seed', g FROM e
                """)
        }
    }

    /// A retried usage event (its id is registered) is found at its own time: one partition,
    /// one index entry, not every partition's share of the user's history.
    @Test(arguments: Statistics.allCases)
    func aRetriedUsageEventIsReadAtItsTime(statistics: Statistics) async throws {
        guard !TestPostgres.onCitus else { return }
        let database = try await TestPostgres.shared.migratedDatabase()
        let tenant = UUID()
        try await database.withPool(size: 1) { owner in
            try await owner.withConnection { connection in
                try await connection.query("INSERT INTO tenants (id, name, daily_completion_xp) VALUES (\(tenant), 'plans', 10)")
                try await connection.query("INSERT INTO users (tenant_id, user_id) VALUES (\(tenant), 'newcomer'), (\(tenant), 'veteran')")
                // Each month's partition and the registry: no analysis but the test's own.
                for table in try await connection.query("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'usage_events'::regclass").rows {
                    try await connection.query(PGQuery(unsafeSQL: "ALTER TABLE \(PGQuery.quoteIdentifier(try table.decode("relname", as: String.self))) SET (autovacuum_enabled = false)"))
                }
                try await connection.query("ALTER TABLE usage_event_ids SET (autovacuum_enabled = false)")
            }
            try await Self.seedUsageEvents(owner, tenant: tenant, user: "newcomer", count: 10)
            if statistics == .ofTheNewcomerOnly {
                try await owner.withConnection { connection in
                    try await connection.query("ANALYZE usage_events")
                    try await connection.query("ANALYZE usage_event_ids")
                }
            }
            func reads(_ user: String, _ events: [(id: UUID, at: String)]) -> [PGQuery] {
                // Each value by its column's name: the columns' order is the declarations'.
                let rows = events.map { event in
                    let byColumn: [String: String] = ["event_type": "deepen_pause", "occurred_at": event.at, "pause_duration": "1", "timer_duration": "10"]
                    return SyncRow(
                        id: event.id, version: 0, updatedAt: Date(), updatedBy: "phone", isDelete: false,
                        values: SyncTable.usageEvents.columns.map { byColumn[$0.declared.name] })
                }
                return [
                    SyncTableSQL.current(.usageEvents, tenant: tenant, user: user, ids: events.map(\.id)),
                    SyncTableSQL.sameContent(SyncTable.usageEvents, tenant: tenant, user: user, rows: rows),
                ]
            }
            func registered(_ user: String) async throws -> [(id: UUID, at: String)] {
                try await owner.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
                    return try await connection.query("SELECT id, occurred_at::text AS at FROM usage_event_ids WHERE tenant_id = \(tenant) AND user_id = \(user) ORDER BY occurred_at LIMIT 2")
                        .rows.map { (try $0.decode("id", as: UUID.self), try $0.decode("at", as: String.self)) }
                }
            }
            let readings = try await Self.readingsAfterAHistoryArrives(
                database, tenant: tenant, tables: "usage\\_events\\_%",
                newcomerReads: { reads("newcomer", try await registered("newcomer")) },
                seedVeteran: { try await Self.seedUsageEvents(owner, tenant: tenant, user: "veteran", count: 36_500) },
                veteranReads: { reads("veteran", try await registered("veteran")) })
            // Both events found, and both the same as sent.
            #expect(readings.rows == [2, 2])
            // A few index entries, not the veteran's 36,500 events (by id alone: 146,040).
            #expect(readings.fetched <= 100, "index scans fetched \(readings.fetched) rows")
            #expect(readings.scanned == 0, "sequential scans read \(readings.scanned) rows")
        }
    }
}
