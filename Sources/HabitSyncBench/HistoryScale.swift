import Foundation
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import ServerHarness

/// What a push and the first pull of a new day cost against a user's history: users with a
/// week, five years and ten years of ten daily habits, measured alternately in one run so the
/// machine's state weighs on all alike. The ratio to the week-old user is the figure.
enum HistoryScale {
    struct Row: Codable {
        let label: String
        let progressRows: Int
        let push: Percentiles
        let refresh: Percentiles
        /// Seeding this user's history and its warm-up push.
        var seedSeconds = 0.0
    }

    static let habitsPerUser = 10

    /// `days` of history for `user`: ten daily habits complete every day, and a conscious exit
    /// every day (in the id registry, which is what the usage streak reads), as the schema
    /// owner. The user's streaks therefore run the whole history: the worst case for any
    /// recompute that walks back to a run's start.
    /// `analyse: false` leaves the statistics as autovacuum has them (perhaps none yet), as a
    /// young or restored database has them.
    static func seed(_ pool: PGPool, tenant: UUID, user: String, days: Int, analyse: Bool = true) async throws -> [UUID] {
        let habits = (0..<habitsPerUser).map { _ in UUID() }
        let today = LocalDate(Date(), in: .gmt)
        let start = today.adding(days: -(days - 1))
        try await pool.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            try await connection.query("INSERT INTO users (tenant_id, user_id) VALUES (\(tenant), \(user))")
            try await connection.query(
                """
                INSERT INTO habits (tenant_id, user_id, id, name, habit_description, icon, habit_type, goal_count, goal_unit, schedule_type,
                                    start_date, created_at, updated_at, updated_by, server_version)
                SELECT \(tenant), \(user), h.id, 'Habit ' || h.n, '', 'star', 'formation', 1, 'times', 'daily', \(start.description)::date, now(), now(), 'seed', h.n
                FROM unnest(\(habits)::uuid[]) WITH ORDINALITY AS h(id, n)
                """)
            try await connection.query(
                """
                INSERT INTO daily_progress (tenant_id, user_id, id, habit_id, date, progress_count, goal_count, timestamps, updated_at, updated_by, server_version)
                SELECT \(tenant), \(user), gen_random_uuid(), h.id, \(start.description)::date + d::int, 1, 1, ARRAY[now()]::timestamptz(3)[], now(), 'seed',
                       \(habits.count) + d * \(habits.count) + h.n
                FROM unnest(\(habits)::uuid[]) WITH ORDINALITY AS h(id, n), generate_series(0, \(days - 1)) d
                """)
            try await connection.query(
                """
                INSERT INTO usage_event_ids (tenant_id, user_id, id, occurred_at, is_exit)
                SELECT \(tenant), \(user), gen_random_uuid(), (\(start.description)::date + d::int)::timestamp AT TIME ZONE 'UTC' + interval '12 hours', true
                FROM generate_series(0, \(days - 2)) d
                """)
            try await connection.query("UPDATE users SET change_counter = \(habits.count * (days + 1)) WHERE tenant_id = \(tenant) AND user_id = \(user)")
        }
        if analyse {
            _ = try await pool.withConnection { try await $0.simpleQuery(unsafeSQL: "ANALYZE habits; ANALYZE daily_progress; ANALYZE usage_event_ids; ANALYZE users") }
        }
        return habits
    }

    /// One completion of today and five usage events: what a phone sends after a check-in.
    static func checkIn(habits: [UUID], round: Int) throws -> Data {
        let now = Date()
        let at = WireTime.format(now)
        var changes: [[String: Any]] = [
            [
                "collection": "dailyProgress", "op": "upsert", "id": UUID().uuidString, "updatedAt": at,
                "record": ["habitId": habits[round % habits.count].uuidString, "date": LocalDate(now, in: .gmt).description, "progressCount": 1 + round % 3, "goalCount": 1],
            ]
        ]
        for n in 0..<5 {
            changes.append([
                "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": at,
                "record": [
                    "eventType": n == 0 ? "exit_to_focus" : "deepen_pause", "timestamp": WireTime.format(now.addingTimeInterval(-Double(n))),
                    "pauseDuration": 5, "timerDuration": 30,
                ],
            ])
        }
        return try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])
    }

    /// Makes the user's derived records look computed yesterday, so the next pull refreshes
    /// them as the first pull of a new day does.
    static func ageDerivedRecords(_ pool: PGPool, tenant: UUID, user: String) async throws {
        try await pool.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            try await connection.query("UPDATE global_streaks SET computed_for = computed_for - 1 WHERE tenant_id = \(tenant) AND user_id = \(user)")
            try await connection.query("UPDATE usage_streaks SET computed_for = computed_for - 1 WHERE tenant_id = \(tenant) AND user_id = \(user)")
        }
    }

    static func measure(_ environment: BenchEnvironment, rounds: Int, histories: [(label: String, days: Int)], analyse: Bool = true) async throws -> [Row] {
        let pool = environment.database.pool
        let tenant = environment.database.tenant
        var users: [(label: String, days: Int, user: String, habits: [UUID], client: DeviceClient)] = []
        var seedSeconds: [Double] = []
        for history in histories {
            let user = "history-\(history.label.replacingOccurrences(of: " ", with: "-"))-\(UUID().uuidString.prefix(6))"
            let seeding = ContinuousClock.now
            let habits = try await seed(pool, tenant: tenant, user: user, days: history.days, analyse: analyse)
            let client = try await environment.client(user: user, device: "phone")
            // The first push builds the month summaries (once per user, as after the upgrade).
            guard try await client.push(try checkIn(habits: habits, round: 0)).status == 200 else { throw BenchError("warm-up push failed") }
            users.append((history.label, history.days, user, habits, client))
            seedSeconds.append((ContinuousClock.now - seeding) / .seconds(1))
        }
        let clock = ContinuousClock()
        var pushes = Array(repeating: [Double](), count: users.count)
        var refreshes = Array(repeating: [Double](), count: users.count)
        for round in 1...rounds {
            for (index, user) in users.enumerated() {
                let body = try checkIn(habits: user.habits, round: round)
                let sent = clock.now
                let status = try await user.client.push(body).status
                pushes[index].append((clock.now - sent) / .milliseconds(1))
                guard status == 200 else { throw BenchError("push answered \(status)") }
            }
            for (index, user) in users.enumerated() {
                try await ageDerivedRecords(pool, tenant: tenant, user: user.user)
                let sent = clock.now
                let status = try await user.client.pull(cursor: nil, limit: 1).status
                refreshes[index].append((clock.now - sent) / .milliseconds(1))
                guard status == 200 else { throw BenchError("pull answered \(status)") }
            }
        }
        return users.enumerated().map { index, user in
            Row(
                label: user.label, progressRows: user.days * habitsPerUser, push: Percentiles(pushes[index]), refresh: Percentiles(refreshes[index]),
                seedSeconds: seedSeconds[index])
        }
    }

    static func table(_ rows: [Row]) -> String {
        func ms(_ value: Double) -> String { String(format: "%.1f", value) }
        guard let base = rows.first else { return "" }
        var lines = [
            "| history (10 daily habits) | progress rows | push p50 / p95 ms | ÷ \(base.label) (p50) | first pull of a day p50 / p95 ms | ÷ \(base.label) (p50) | target |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in rows {
            lines.append(
                "| \(row.label) | \(row.progressRows) | \(ms(row.push.p50)) / \(ms(row.push.p95)) | \(String(format: "%.2f", row.push.p50 / max(base.push.p50, 0.001))) | \(ms(row.refresh.p50)) / \(ms(row.refresh.p95)) | \(String(format: "%.2f", row.refresh.p50 / max(base.refresh.p50, 0.001))) | \(row.label == base.label ? "" : "≤ 1.3") |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// One fresh database's ratios, for the table over several (`--history-runs`).
    struct Run: Codable {
        let analysed: Bool
        let rows: [Row]
    }

    /// The largest history's push and first-pull p50 over the smallest's, per fresh database:
    /// the plans must not depend on whether statistics were gathered before the first request.
    static func runsTable(_ runs: [Run]) -> String {
        var lines = [
            "| fresh database | statistics | seeding s | push ÷ \(runs.first?.rows.first?.label ?? "") (p50), per history | first pull ÷ (p50), per history |",
            "|---|---|---|---|---|",
        ]
        for (number, run) in runs.enumerated() {
            guard let base = run.rows.first else { continue }
            let push = run.rows.dropFirst().map { "\($0.label) \(String(format: "%.2f", $0.push.p50 / max(base.push.p50, 0.001)))" }.joined(separator: ", ")
            let pull = run.rows.dropFirst().map { "\($0.label) \(String(format: "%.2f", $0.refresh.p50 / max(base.refresh.p50, 0.001)))" }.joined(separator: ", ")
            lines.append(
                "| \(number + 1) | \(run.analysed ? "analysed after seeding" : "as autovacuum left them") | \(String(format: "%.1f", run.rows.reduce(0) { $0 + $1.seedSeconds })) | \(push) | \(pull) |"
            )
        }
        return lines.joined(separator: "\n")
    }
}
