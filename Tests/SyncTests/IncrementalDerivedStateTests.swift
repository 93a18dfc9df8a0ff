import Foundation
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import SeededRandom
import SyncTestSupport
import TestSupport
import Testing

/// The derived state a push maintains incrementally (stored month summaries, the ledger's
/// running total) equals a recompute from scratch after every random edit of a long history.
@Suite struct IncrementalDerivedStateTests {
    static var today: LocalDate { LocalDate(Date(), in: TimeZone(identifier: "UTC")!) }

    /// A device's view of the history it edits.
    struct History {
        var habits: [UUID: JSON] = [:]
        var progress: [String: UUID] = [:]  // "habit|date" → record id
        var clock = 0.0

        mutating func tick() -> String {
            clock += 1
            return Wire.at(clock)
        }
    }

    static var schedules: [JSON] {
        [
            ["type": "daily"], ["type": "everyNDays", "n": 2], ["type": "everyNDays", "n": 5],
            ["type": "specificWeekdays", "weekdays": ["monday", "wednesday", "saturday"]],
            ["type": "frequencyWeekly", "n": 3], ["type": "frequencyMonthly", "n": 10],
        ]
    }
    static let zones = ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata", "America/New_York"]

    static func habitRecord(start: LocalDate, end: LocalDate?, using generator: inout SeededGenerator) -> JSON {
        let breaking = Bool.random(using: &generator)
        let goal = Int.random(in: 1...3, using: &generator)
        var record: JSON = [
            "name": "Habit", "habitType": breaking ? "breaking" : "formation", "goalCount": goal,
            "goalUnit": "times", "schedule": schedules.randomElement(using: &generator)!, "startDate": start.description,
        ]
        if breaking { record["baselineCount"] = goal + 3 }
        if let end { record["endDate"] = end.description }
        return record
    }

    static func progressChange(_ history: inout History, habit: UUID, date: LocalDate, using generator: inout SeededGenerator) -> JSON {
        let key = "\(habit)|\(date)"
        let id = history.progress[key] ?? UUID()
        history.progress[key] = id
        var record: JSON = [
            "habitId": habit.uuidString, "date": date.description, "progressCount": Int.random(in: 0...4, using: &generator),
            "goalCount": Int.random(in: 1...3, using: &generator),
        ]
        if Int.random(in: 0..<12, using: &generator) == 0 { record["skipReason"] = "travel" }
        return Wire.change("dailyProgress", id, at: history.tick(), record: record)
    }

    @Test(arguments: [UInt64(20261123), 7, 1_000_003])
    func randomEditsOfLongHistoriesMatchAFullRecompute(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let world = try await SyncWorld.make()
        let today = Self.today
        try await world.serve { server in
            let device = try await world.client(server, user: "veteran")
            var history = History()

            // Two to four habits over one to three years; with seed 7 one starts twelve years
            // ago, so the ten-year window starts inside its history (the partial first month).
            var changes: [JSON] = [Wire.change("userSettings", UUID(), at: history.tick(), record: ["timezone": "UTC"])]
            for index in 0..<Int.random(in: 2...4, using: &generator) {
                let id = UUID()
                let age = seed == 7 && index == 0 ? 4_400 : Int.random(in: 300...1_100, using: &generator)
                let record = Self.habitRecord(start: today.adding(days: -age), end: nil, using: &generator)
                history.habits[id] = record
                changes.append(Wire.change("habits", id, at: history.tick(), record: record))
            }
            let first = try await device.push(changes)
            #expect(first.results.allSatisfy { $0["status"] as? String == "applied" }, "\(first.results)")
            var days: [JSON] = []
            for (id, record) in history.habits.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                let start = LocalDate(record["startDate"] as! String)!
                for offset in stride(from: max(0, today.dayNumber - start.dayNumber - 1_200), through: today.dayNumber - start.dayNumber, by: 1)
                where Int.random(in: 0..<10, using: &generator) < 7 {
                    days.append(Self.progressChange(&history, habit: id, date: start.adding(days: offset), using: &generator))
                }
            }
            for batch in stride(from: 0, to: days.count, by: 500) {
                #expect(try await device.push(Array(days[batch..<min(days.count, batch + 500)])).status == 200)
            }
            try await Self.expectIncrementalEqualsFull(world, step: "history of \(days.count) days")
            #expect(try await world.count("derived_streak_months", where: "user_id = 'veteran'") > 6)

            for step in 0..<30 {
                var edits: [JSON] = []
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let habits = history.habits.keys.sorted { $0.uuidString < $1.uuidString }
                    switch Int.random(in: 0..<100, using: &generator) {
                    case 0..<40 where !habits.isEmpty:  // a recent day, mostly today
                        let date = today.adding(days: -[0, 0, 0, 1, 2, 6].randomElement(using: &generator)!)
                        edits.append(Self.progressChange(&history, habit: habits.randomElement(using: &generator)!, date: date, using: &generator))
                    case 40..<58 where !habits.isEmpty:  // an old day, back to years ago
                        let date = today.adding(days: -Int.random(in: 7...1_100, using: &generator))
                        edits.append(Self.progressChange(&history, habit: habits.randomElement(using: &generator)!, date: date, using: &generator))
                    case 58..<64:  // a progress record deleted
                        if let (key, id) = history.progress.randomElement(using: &generator) {
                            history.progress[key] = nil
                            edits.append(Wire.change("dailyProgress", id, at: history.tick(), record: nil))
                        }
                    case 64..<71 where !habits.isEmpty:  // a schedule, type or range edit
                        let id = habits.randomElement(using: &generator)!
                        let start = today.adding(days: -Int.random(in: 30...1_200, using: &generator))
                        let end = Bool.random(using: &generator) ? nil : today.adding(days: -Int.random(in: 0...29, using: &generator))
                        let record = Self.habitRecord(start: start, end: end, using: &generator)
                        history.habits[id] = record
                        edits.append(Wire.change("habits", id, at: history.tick(), record: record))
                    case 71..<74 where habits.count > 1:  // a habit deleted (its progress cascades)
                        let id = habits.randomElement(using: &generator)!
                        history.habits[id] = nil
                        history.progress = history.progress.filter { !$0.key.hasPrefix("\(id)|") }
                        edits.append(Wire.change("habits", id, at: history.tick(), record: nil))
                    case 74..<77:  // a new habit
                        let id = UUID()
                        let record = Self.habitRecord(start: today.adding(days: -Int.random(in: 0...400, using: &generator)), end: nil, using: &generator)
                        history.habits[id] = record
                        edits.append(Wire.change("habits", id, at: history.tick(), record: record))
                    case 77..<82:  // a time-zone change moves today by up to a day
                        edits.append(Wire.change("userSettings", UUID(), at: history.tick(), record: ["timezone": Self.zones.randomElement(using: &generator)!]))
                    case 82..<95:  // a usage event in the last days: mostly conscious exits, often next to another; the rest must not count
                        let at = Date().addingTimeInterval(-Double(Int.random(in: 60...1_000_000, using: &generator)))
                        let type = ["exit_to_focus", "exit_to_focus", "exit_to_focus", "deepen_pause", "proceed_to_app"].randomElement(using: &generator)!
                        edits.append(
                            Wire.change(
                                "usageEvents", UUID(), at: history.tick(),
                                record: [
                                    "eventType": type, "timestamp": WireTime.format(at), "pauseDuration": 5, "timerDuration": 30,
                                    "targetAppName": "Mail",
                                ]))
                    default:  // a device's own XP entry
                        edits.append(
                            Wire.change(
                                "xpTransactions", UUID(), at: history.tick(),
                                record: ["amount": Int.random(in: -400...900, using: &generator) | 1, "reason": "bonus", "timestamp": Wire.at(0)]))
                    }
                }
                let reply = try await device.push(edits)
                #expect(reply.status == 200)
                try await Self.expectIncrementalEqualsFull(world, step: "seed \(seed) step \(step): \(reply.results.map { $0["status"] as? String ?? "?" })")
            }
        }
    }

    /// A push of today's progress leaves every stored month in place: the incremental path
    /// reads today's month, not the history.
    @Test func aCheckInOfTodayKeepsTheStoredMonths() async throws {
        var generator = SeededGenerator(seed: 11)
        let world = try await SyncWorld.make()
        let today = Self.today
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            var history = History()
            let habit = UUID()
            _ = try await device.push([
                Wire.change(
                    "habits", habit, at: history.tick(),
                    record: [
                        "name": "Run", "habitType": "formation", "goalCount": 1,
                        "goalUnit": "km", "schedule": ["type": "daily"], "startDate": today.adding(days: -400).description,
                    ])
            ])
            let days = (0...400).map { Self.progressChange(&history, habit: habit, date: today.adding(days: -$0), using: &generator) }
            _ = try await device.push(days)
            // Months before the one the test started in: a month that closes while the test
            // runs (at midnight at a month's end) is stored as well, and must not count.
            let closed = "user_id = 'alice' AND month < '\(today.firstOfMonth)'"
            let months = try await world.count("derived_streak_months", where: closed)
            #expect(months >= 12)
            _ = try await device.push([Self.progressChange(&history, habit: habit, date: today, using: &generator)])
            #expect(try await world.count("derived_streak_months", where: closed) == months)
            // An edit of a day a year ago forgets that month only, and the next push rebuilds it.
            _ = try await device.push([Self.progressChange(&history, habit: habit, date: today.adding(days: -370), using: &generator)])
            #expect(try await world.count("derived_streak_months", where: closed) == months)
            try await Self.expectIncrementalEqualsFull(world, step: "after an old edit")
        }
    }

    /// The delete triggers (no push deletes rows; maintenance and erasure do) and the insert of
    /// a habit, checked in a transaction that is rolled back.
    @Test func deletesAndNewHabitsForgetWhatTheyChange() async throws {
        var generator = SeededGenerator(seed: 12)
        let world = try await SyncWorld.make()
        let today = Self.today
        try await world.serve { server in
            let device = try await world.client(server, user: "alice")
            var history = History()
            let habit = UUID()
            _ = try await device.push([
                Wire.change(
                    "habits", habit, at: history.tick(),
                    record: [
                        "name": "Run", "habitType": "formation", "goalCount": 1,
                        "goalUnit": "km", "schedule": ["type": "daily"], "startDate": today.adding(days: -200).description,
                    ])
            ])
            _ = try await device.push((0...200).map { Self.progressChange(&history, habit: habit, date: today.adding(days: -$0), using: &generator) })
            _ = try await device.push([Wire.change("xpTransactions", UUID(), at: history.tick(), record: Wire.xp(amount: 70))])
        }
        let old = today.adding(days: -150)
        struct Expected: Error {}
        await #expect(throws: Expected.self) {
            try await world.database.withPool(size: 1) { pool in
                try await pool.withTransaction { connection in
                    try await RequestScope.set(on: connection, tenantID: world.tenant, userID: "alice")
                    func count(_ condition: String) async throws -> Int {
                        try await connection.query(PGQuery(unsafeSQL: "SELECT count(*)::int8 AS n FROM derived_streak_months WHERE user_id = 'alice' AND \(condition)")).single().decode("n")
                    }
                    func ledger() async throws -> (running: Int, summed: Int) {
                        let row = try await connection.query(
                            """
                            SELECT (SELECT xp_ledger_sum FROM users WHERE user_id = 'alice') AS running,
                                   (SELECT coalesce(sum(amount), 0)::int8 FROM xp_transactions WHERE user_id = 'alice') AS summed
                            """
                        ).single()
                        return (try row.decode("running"), try row.decode("summed"))
                    }
                    // Pushes keep these themselves (migration 0049); every other writer has the triggers.
                    func daysInTheDigest() async throws -> Int {
                        let digest = "SELECT (record_digests -> 'dailyProgress' ->> 'count')::int8 AS n FROM users WHERE user_id = 'alice'"
                        return try await connection.query(PGQuery(unsafeSQL: digest)).single().decode("n")
                    }
                    let month = "month = '\(old.firstOfMonth)'"
                    #expect(try await count(month) == 1)
                    let months = try await count("true")
                    let days = try await daysInTheDigest()
                    #expect(days == 201)
                    try await connection.query("DELETE FROM daily_progress WHERE user_id = 'alice' AND date = \(old.description)::date")
                    #expect(try await count(month) == 0)
                    #expect(try await count("true") == months - 1)
                    #expect(try await daysInTheDigest() == days - 1)

                    let before = try await ledger()
                    #expect(before.running == before.summed && before.summed != 0)
                    try await connection.query("DELETE FROM xp_transactions WHERE user_id = 'alice' AND updated_by <> 'server'")
                    let after = try await ledger()
                    #expect(after.running == after.summed && after.summed == before.summed - 70)

                    try await connection.query(
                        """
                        INSERT INTO habits (tenant_id, user_id, id, name, habit_description, icon, habit_type, goal_count, goal_unit, schedule_type,
                                            start_date, created_at, updated_at, updated_by, server_version)
                        VALUES (\(world.tenant), 'alice', gen_random_uuid(), 'Walk', '', '', 'formation', 1, 'km', 'daily', '2025-01-01', now(), now(), 'test', 900000)
                        """)
                    #expect(try await count("true") == 0)
                    throw Expected()
                }
            }
        }
    }

    static func expectIncrementalEqualsFull(_ world: SyncWorld, user: String = "veteran", step: String) async throws {
        let users = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { try await $0.query("SELECT user_id FROM users WHERE tenant_id = \(world.tenant)").rows.map { try $0.decode("user_id", as: String.self) } }
        }
        for user in users {
            let (incremental, full) = try await world.database.withPool(size: 1) { try await DerivedStateAudit(pool: $0).compare(tenant: world.tenant, user: user) }
            #expect(incremental == full, "\(step)\nincremental: \(incremental)\nfull:        \(full)")
            #expect(incremental.runningLedgerSum == incremental.ledgerSum, "\(step)")
        }
        try await expectDigestsMatchTheRows(world, step: step)
    }

    /// Every user's digests (`users.record_digests`) equal their live rows' counted from
    /// scratch, collection by collection: kept by the triggers for every writer, and by the push
    /// itself for daily progress (migration 0049).
    static func expectDigestsMatchTheRows(_ world: SyncWorld, step: String) async throws {
        let tables = [
            ("habits", "habits"), ("reminders", "reminders"), ("daily_progress", "dailyProgress"), ("xp_transactions", "xpTransactions"),
            ("achievements", "achievements"), ("focus_sessions", "focusSessions"), ("selected_apps", "selectedApps"),
            ("user_settings", "userSettings"),
        ]
        let counted = tables.map { table, collection in
            """
            SELECT tenant_id, user_id, '\(collection)' AS collection, count(*) AS n, bit_xor(habitsync_digest_term(id, server_version)) AS x
            FROM \(table) WHERE deleted_at IS NULL GROUP BY tenant_id, user_id
            """
        }.joined(separator: " UNION ALL ")
        let collections = tables.map { "'\($0.1)'" }.joined(separator: ", ")
        let wrong = try await world.database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query(
                    PGQuery(
                        unsafeSQL: """
                            WITH counted AS (\(counted))
                            SELECT u.user_id || ' ' || c.collection || ': kept ' || coalesce(u.record_digests ->> c.collection, 'nothing')
                                   || ', rows ' || coalesce(r.n, 0) || ' ' || coalesce(r.x, 0) AS wrong
                            FROM users u CROSS JOIN unnest(ARRAY[\(collections)]) AS c(collection)
                            LEFT JOIN counted r ON r.tenant_id = u.tenant_id AND r.user_id = u.user_id AND r.collection = c.collection
                            WHERE u.tenant_id = '\(world.tenant.uuidString.lowercased())'
                              AND (coalesce((u.record_digests -> c.collection ->> 'count')::int8, 0),
                                   coalesce((u.record_digests -> c.collection ->> 'xor')::int8, 0))
                                  IS DISTINCT FROM (coalesce(r.n, 0), coalesce(r.x, 0))
                            """)
                ).rows.map { try $0.decode("wrong", as: String.self) }
            }
        }
        #expect(wrong.isEmpty, "\(step): digests differ from the rows: \(wrong)")
    }
}
