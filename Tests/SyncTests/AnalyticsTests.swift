import Foundation
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// The analytics views against the Swift rules, the stats API against the views, and the
/// analyst role's reach — on a data set pushed through the API.
@Suite struct AnalyticsTests {
    static let utc = TimeZone(identifier: "UTC")!
    static var today: LocalDate { LocalDate(Date(), in: utc) }

    struct DataSet {
        var habits: [HabitDefinition] = []
        var records: [DayRecord] = []
        var sessions: [FocusSessionRecord] = []
        var events: [UsageEventRecord] = []
        var changes: [JSON] = []
    }

    /// A deterministic mix of schedules, progress, skips, sessions and events over 20 days.
    static func dataSet() throws -> DataSet {
        var set = DataSet()
        let today = Self.today
        let specs: [(HabitSchedule, String, Int, Int)] = [
            (.daily, "formation", -9, 1), (.everyNDays(2), "formation", -9, 2), (.specificWeekdays([.monday, .wednesday, .friday]), "formation", -19, 1),
            (.frequencyWeekly(2), "formation", -13, 1), (.daily, "breaking", -5, 2),
        ]
        for (index, spec) in specs.enumerated() {
            let id = UUID()
            let start = today.adding(days: spec.2)
            let habit = HabitDefinition(id: id, habitType: spec.1, schedule: spec.0, startDate: start, endDate: nil)
            set.habits.append(habit)
            var schedule: JSON = ["type": spec.0.type]
            if let n = spec.0.n { schedule["n"] = n }
            if let days = spec.0.weekdays { schedule["weekdays"] = days.map(\.rawValue) }
            var record: JSON = ["name": "habit \(index)", "habitType": spec.1, "goalCount": spec.3, "goalUnit": "times", "schedule": schedule, "startDate": start.description]
            if spec.1 == "breaking" { record["baselineCount"] = 6 }
            set.changes.append(Wire.change("habits", id, at: Wire.at(0), record: record))
            for offset in 0...(-spec.2) where (offset + index) % 3 != 0 {
                let date = start.adding(days: offset)
                let count = (offset * 7 + index) % 4
                let skipped = (offset + index) % 11 == 0
                set.records.append(DayRecord(habitID: id, date: date, progressCount: count, goalCount: spec.3, skipped: skipped))
                var progress: JSON = ["habitId": id.uuidString, "date": date.description, "progressCount": count, "goalCount": spec.3]
                if skipped { progress["skipReason"] = "rest" }
                set.changes.append(Wire.change("dailyProgress", UUID(), at: Wire.at(1), record: progress))
            }
        }
        let now = Date()
        for day in 0..<8 {
            for (n, state) in ["completed", "abandoned", "completed"].enumerated() where (day + n) % 4 != 1 {
                let start = now.addingTimeInterval(-Double(day) * 86_400 - 7200 - Double(n) * 1800)
                let record: JSON = ["startTime": WireTime.format(start), "endTime": WireTime.format(start.addingTimeInterval(1500)), "state": state, "duration": Double(600 + 100 * n)]
                set.sessions.append(
                    FocusSessionRecord(
                        startTime: WireTime.parse(WireTime.format(start))!, endTime: WireTime.parse(WireTime.format(start.addingTimeInterval(1500))),
                        state: state, duration: Double(600 + 100 * n), pausedDuration: 0, createdAt: start))
                set.changes.append(Wire.change("focusSessions", UUID(), at: Wire.at(2), record: record))
            }
        }
        for index in 0..<40 {
            let type = ["exit_to_focus", "deepen_pause", "proceed_to_app"][index % 3]
            let at = WireTime.format(now.addingTimeInterval(-Double(index) * 20_000))
            var fields: [String: JSONValue] = ["eventType": .string(type), "timestamp": .string(at), "pauseDuration": .number(Double(index % 30)), "timerDuration": .number(30)]
            if type == "proceed_to_app" { fields["targetAppName"] = .string("Instagram") }
            set.events.append(try UsageEventRecord(fields, context: .standalone()))
            var record: JSON = ["eventType": type, "timestamp": at, "pauseDuration": index % 30, "timerDuration": 30]
            if type == "proceed_to_app" { record["targetAppName"] = "Instagram" }
            set.changes.append(Wire.change("usageEvents", UUID(), at: Wire.at(3), record: record))
        }
        return set
    }

    static func rows(_ pool: PGPool, _ sql: String) async throws -> [PGRow] {
        try await pool.withConnection { try await $0.query(PGQuery(unsafeSQL: sql)).rows }
    }

    @Test func viewsMatchTheSwiftRulesAndTheStatsAPIMatchesTheViews() async throws {
        let world = try await SyncWorld.make()
        let data = try Self.dataSet()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let reply = try await device.push(data.changes)
            #expect(reply.results.allSatisfy { $0["status"] as? String == "applied" }, "\(reply.results.filter { $0["status"] as? String != "applied" }.prefix(2))")

            let today = Self.today
            try await world.database.withPool(size: 1) { owner in
                // Day by day, the view's status is the Swift classification.
                let classifier = DayClassifier(habits: data.habits, records: data.records)
                let days = try await Self.rows(owner, "SELECT date::text AS date, due_habits, completed_habits, day_status FROM analytics.daily_habit_completion ORDER BY date")
                #expect(days.count == today.dayNumber - classifier.firstDay!.dayNumber + 1)
                for row in days {
                    let date = LocalDate(try row.decode("date", as: String.self))!
                    let expected: String =
                        switch classifier.classify(date) {
                        case .complete: "complete";
                        case .incomplete: "incomplete";
                        case .rest: "rest"
                        }
                    #expect(try row.decode("day_status", as: String.self) == expected, "\(date)")
                    let due = data.habits.filter { habit in habit.isDue(on: date) && !data.records.contains { $0.habitID == habit.id && $0.date == date && $0.skipped } }
                    #expect(try row.decode("due_habits", as: Int.self) == due.count, "\(date)")
                    let completed = due.filter { habit in data.records.contains { $0.habitID == habit.id && $0.date == date && $0.isComplete(habitType: habit.habitType) } }
                    #expect(try row.decode("completed_habits", as: Int.self) == completed.count, "\(date)")
                }
                // Per fixed-schedule habit, the rate is completed due days over due days.
                for habit in data.habits where habit.hasFixedSchedule {
                    let dueDays = (habit.startDate.dayNumber...today.dayNumber).map(LocalDate.init(dayNumber:)).filter { date in
                        habit.isDue(on: date) && !data.records.contains { $0.habitID == habit.id && $0.date == date && $0.skipped }
                    }
                    let done = dueDays.filter { date in data.records.contains { $0.habitID == habit.id && $0.date == date && $0.isComplete(habitType: habit.habitType) } }
                    let row = try #require(
                        try await Self.rows(
                            owner, "SELECT due_days, completion_rate::float8 AS rate, struggling FROM analytics.habit_completion_rates WHERE habit_id = '\(habit.id.uuidString.lowercased())'"
                        ).first)
                    #expect(try row.decode("due_days", as: Int.self) == dueDays.count)
                    let rate = dueDays.isEmpty ? nil : (Double(done.count) / Double(dueDays.count) * 10_000).rounded() / 10_000
                    #expect(try row.decodeIfPresent("rate", as: Double.self) == rate)
                    #expect(try row.decode("struggling", as: Bool.self) == ((rate ?? 1) < 0.5))
                }
                // ForestStats and usage statistics.
                let forest = ForestStats.compute(data.sessions, today: today, timeZone: Self.utc)
                let focus = try #require(
                    try await Self.rows(
                        owner,
                        "SELECT total_trees, total_focus_time, total_sessions, todays_trees, current_streak, longest_streak, abandoned_count, completion_rate::float8 AS rate FROM analytics.focus_stats"
                    ).first)
                #expect(try focus.decode("total_trees", as: Int.self) == forest.totalTrees)
                #expect(try focus.decode("total_focus_time", as: Double.self) == forest.totalFocusTime)
                #expect(try focus.decode("total_sessions", as: Int.self) == forest.totalSessions)
                #expect(try focus.decode("todays_trees", as: Int.self) == forest.todaysTrees)
                #expect(try focus.decode("current_streak", as: Int.self) == forest.currentStreak)
                #expect(try focus.decode("longest_streak", as: Int.self) == forest.longestStreak)
                #expect(try focus.decode("abandoned_count", as: Int.self) == forest.abandonedCount)
                #expect(abs(try focus.decode("rate", as: Double.self) - forest.completionRate) < 0.001)
                let usage = UsageStatistics.compute(data.events, today: today, timeZone: Self.utc)
                let usageRow = try #require(
                    try await Self.rows(owner, "SELECT hours_reclaimed::float8 AS hours, total_conscious_exits, average_pause_time::float8 AS average, intentionality_score FROM analytics.usage_stats")
                        .first)
                #expect(abs(try usageRow.decode("hours", as: Double.self) - usage.hoursReclaimed) < 1e-9)
                #expect(try usageRow.decode("total_conscious_exits", as: Int.self) == usage.totalConsciousExits)
                #expect(abs(try usageRow.decode("average", as: Double.self) - usage.averagePauseTime) < 1e-9)
                #expect(abs(try usageRow.decode("intentionality_score", as: Double.self) - usage.intentionalityScore) < 1e-9)
                let trend = try await Self.rows(owner, "SELECT conscious_exits, events FROM analytics.usage_daily_trend ORDER BY date")
                #expect(try trend.map { try $0.decode("conscious_exits", as: Int.self) } == usage.trend.map(\.exits))
                #expect(try trend.map { try $0.decode("events", as: Int.self) } == usage.trend.map(\.events))
                #expect(try await Self.rows(owner, "SELECT * FROM analytics.xp_ledger_check").isEmpty)

                // The stats API gives the views' numbers.
                func api(_ path: String) async throws -> JSON {
                    let reply = try await TestHTTP.request("GET", server.baseURL + path, headers: ["Authorization": "Bearer \(device.token)"])
                    #expect(reply.status == 200, "\(path): \(reply.text.prefix(200))")
                    return try reply.json()
                }
                let focusAPI = try await api("/v1/stats/focus")
                #expect(focusAPI["totalTrees"] as? Int == forest.totalTrees)
                #expect(focusAPI["currentStreak"] as? Int == forest.currentStreak)
                #expect(focusAPI["abandonedCount"] as? Int == forest.abandonedCount)
                let usageAPI = try await api("/v1/stats/usage")
                #expect(usageAPI["totalConsciousExits"] as? Int == usage.totalConsciousExits)
                #expect((usageAPI["trend"] as? [JSON])?.count == 30)
                let first = data.habits.map(\.startDate).min()!
                let habitsAPI = try await api("/v1/stats/habits?from=\(first)&to=\(today)")
                let viewRates = try await Self.rows(owner, "SELECT habit_id::text AS id, due_days, completed_days, struggling FROM analytics.habit_completion_rates")
                let apiHabits = habitsAPI["habits"] as? [JSON] ?? []
                #expect(apiHabits.count == viewRates.count)
                for row in viewRates {
                    let match = apiHabits.first { $0["habitId"] as? String == (try? row.decode("id", as: String.self)) }
                    #expect(match?["dueDays"] as? Int == (try row.decode("due_days", as: Int.self)))
                    #expect(match?["completedDays"] as? Int == (try row.decode("completed_days", as: Int.self)))
                    #expect(match?["struggling"] as? Bool == (try row.decode("struggling", as: Bool.self)))
                }
                #expect((habitsAPI["days"] as? [JSON])?.count == today.dayNumber - first.dayNumber + 1)
            }
        }
    }

    @Test func theAnalystRoleReadsEveryTenantWritesNothingAndSeesNoSecrets() async throws {
        let world = try await SyncWorld.make(name: "tenant-a")
        let (tenantB, keyB) = try await world.addTenant("tenant-b")
        try await world.serve { server in
            let a = try await world.client(server, user: "alice")
            let b = SyncClient(baseURL: server.baseURL, token: try await world.token(user: "bo", tenant: tenantB, key: keyB), device: "d")
            for device in [a, b] {
                _ = try await device.push([
                    Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit().merging(["startDate": Self.today.adding(days: -2).description]) { _, n in n }),
                    Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()),
                ])
            }
        }
        let role = "analyst_\(UInt32.random(in: 0...UInt32.max))"
        try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { try await $0.simpleQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD 'analyst-pw' IN ROLE habitsync_analyst") }
        }
        let analyst = PGPool(
            configuration: .init(connection: .init(connectionString: world.database.connectionString + " user=\(role) password=analyst-pw"), maximumConnections: 1), logger: TestPostgres.logger)
        defer { analyst.close() }
        try await analyst.withConnection { connection in
            let tenants = try await connection.query("SELECT count(DISTINCT tenant_id) AS n FROM analytics.habit_completion_rates").single().decode("n", as: Int.self)
            #expect(tenants == 2)
            #expect(try await connection.query("SELECT count(DISTINCT tenant_id) AS n FROM usage_events").single().decode("n", as: Int.self) == 2)
            #expect(try await connection.query("SELECT count(*) AS n FROM analytics.usage_stats").single().decode("n", as: Int.self) == 2)
            #expect(try await connection.query("SELECT count(*) AS n FROM tenants").single().decode("n", as: Int.self) == 2)
        }
        for forbidden in [
            "SELECT * FROM tenant_keys", "SELECT * FROM push_batches", "INSERT INTO tenants (name) VALUES ('x')",
            "UPDATE habits SET name = 'x'", "DELETE FROM usage_events", "CREATE TABLE analytics.mine (n int)",
        ] {
            await #expect("\(forbidden)") {
                try await analyst.withConnection { _ = try await $0.query(PGQuery(unsafeSQL: forbidden)) }
            } throws: { ($0 as? PGError)?.sqlState == .insufficientPrivilege }
        }
        await analyst.shutdownThreads()
    }

    @Test func statisticsAreCompactJSONLikeEveryOtherResponse() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            let habit = UUID()
            _ = try await device.push([
                Wire.change("habits", habit, at: Wire.at(0), record: Wire.habit()),
                Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: Wire.progress(habit: habit, count: 10)),
            ])
            let token = try await world.token(user: "alice")
            for path in ["/v1/stats/habits?from=\(Wire.day(-19))&to=\(Wire.day(0))", "/v1/stats/focus", "/v1/stats/usage"] {
                let reply = try await TestHTTP.request("GET", server.baseURL + path, headers: ["Authorization": "Bearer \(token)"])
                #expect(reply.status == 200)
                #expect(!reply.text.contains(" : ") && !reply.text.contains(", \""), "\(path): \(reply.text.prefix(120))")
                #expect((try? reply.json()) != nil)
            }
        }
    }
}
