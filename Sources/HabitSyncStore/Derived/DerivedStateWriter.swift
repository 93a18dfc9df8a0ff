import Foundation
import HabitSyncDomain
import LibPQClient

/// Recomputes a user's derived records — globalStreak, userProgress, usageStreak — and keeps
/// the daily completion XP in the ledger, inside the transaction that changed their inputs
/// (it holds the user's row lock). A full per-user recompute: a constant number of
/// statements, reading the user's habits, progress, ledger totals and exit days.
struct DerivedStateWriter {
    let connection: PGConnection
    let tenant: UUID
    let user: String
    let derivedRecordID: UUID
    let now: Date

    static let context = """
        SELECT u.time_zone, t.daily_completion_xp FROM users u JOIN tenants t ON t.id = u.tenant_id
        WHERE u.tenant_id = $1 AND u.user_id = $2
        """
    static let habits = """
        SELECT id, habit_type, schedule_type, schedule_n, schedule_weekdays, start_date::text AS start_date, end_date::text AS end_date
        FROM habits WHERE tenant_id = $1 AND user_id = $2 AND deleted_at IS NULL
        """
    static let progress = """
        SELECT habit_id, date::text AS date, progress_count, goal_count, skip_reason IS NOT NULL AS skipped
        FROM daily_progress WHERE tenant_id = $1 AND user_id = $2 AND deleted_at IS NULL
        """
    /// The ledger's total and the server's net daily award per date.
    static let ledger = """
        SELECT NULL::text AS date, coalesce(sum(amount), 0)::int8 AS amount FROM xp_transactions WHERE tenant_id = $1 AND user_id = $2
        UNION ALL
        SELECT date::text, sum(amount)::int8 FROM xp_transactions
        WHERE tenant_id = $1 AND user_id = $2 AND updated_by = 'server' AND reason IN ('daily_completion', 'daily_completion_reversed') AND date IS NOT NULL
        GROUP BY date
        """
    /// Exit days since an instant, from the id registry (usage_event_ids_exits), which keeps
    /// the exits of months maintenance archived.
    static let exitDaysSince = """
        SELECT DISTINCT (occurred_at AT TIME ZONE $3)::date::text AS day FROM usage_event_ids
        WHERE tenant_id = $1 AND user_id = $2 AND is_exit AND occurred_at >= $4
        """
    static let latestExit = """
        SELECT (max(occurred_at) AT TIME ZONE $3)::date::text AS day FROM usage_event_ids
        WHERE tenant_id = $1 AND user_id = $2 AND is_exit
        """
    static let insertAwards = """
        INSERT INTO xp_transactions (tenant_id, user_id, id, amount, reason, occurred_at, date, updated_at, updated_by, server_version)
        SELECT $1, $2, gen_random_uuid(), a.amount, a.reason, $3, a.date, date_trunc('milliseconds', $3::timestamptz), 'server', a.version
        FROM unnest($4::int4[], $5::text[], $6::date[], $7::int8[]) AS a(amount, reason, date, version)
        """
    static let current = """
        SELECT 'globalStreak' AS kind, habitsync_global_streak_record(g)::text AS record FROM global_streaks g WHERE tenant_id = $1 AND user_id = $2
        UNION ALL SELECT 'userProgress', habitsync_user_progress_record(p)::text FROM user_progress p WHERE tenant_id = $1 AND user_id = $2
        UNION ALL SELECT 'usageStreak', habitsync_usage_streak_record(s)::text FROM usage_streaks s WHERE tenant_id = $1 AND user_id = $2
        """

    /// Writes what changed and returns the next free version.
    func recompute(nextVersion: Int64) async throws -> Int64 {
        var next = nextVersion
        let binds: [PGBind] = [tenant.pgBind(), user.pgBind()]
        guard let settings = try await connection.query(PGQuery(unsafeSQL: Self.context, binds: binds)).rows.first else { return next }
        let zoneName = try settings.decode("time_zone", as: String.self)
        let timeZone = TimeZone(identifier: zoneName) ?? TimeZone.gmt
        let dailyXP = try settings.decode("daily_completion_xp", as: Int.self)
        let today = LocalDate(now, in: timeZone)

        let habits = try await connection.query(PGQuery(unsafeSQL: Self.habits, binds: binds)).rows.compactMap(Self.habit)
        let records = try await connection.query(PGQuery(unsafeSQL: Self.progress, binds: binds)).rows.compactMap { row -> DayRecord? in
            guard let date = LocalDate(try row.decode("date", as: String.self)) else { return nil }
            return DayRecord(habitID: try row.decode("habit_id"), date: date, progressCount: try row.decode("progress_count"),
                             goalCount: try row.decode("goal_count"), skipped: try row.decode("skipped"))
        }
        var ledgerSum = 0
        var netAwards: [LocalDate: Int] = [:]
        for row in try await connection.query(PGQuery(unsafeSQL: Self.ledger, binds: binds)).rows {
            let amount = try row.decode("amount", as: Int.self)
            if let text = try row.decodeIfPresent("date", as: String.self), let date = LocalDate(text) { netAwards[date] = amount } else { ledgerSum = amount }
        }
        // The usage streak needs the days back to the start of the current run only: read a
        // window of recent days, widening it while the run reaches its edge.
        var window = 62
        var exitDays: Set<LocalDate> = []
        while true {
            let since = now.addingTimeInterval(-Double(window + 2) * 86_400)
            exitDays = Set(try await connection.query(PGQuery(unsafeSQL: Self.exitDaysSince, binds: binds + [zoneName.pgBind(), since.pgBind()])).rows.compactMap {
                LocalDate(try $0.decode("day", as: String.self))
            })
            let run = UsageStreak.compute(exitDays: exitDays, today: today)
            guard let start = run.startDate, start.dayNumber <= today.dayNumber - window, window < 40_000 else { break }
            window *= 4
        }
        var latestExit = exitDays.max()
        if latestExit == nil {
            latestExit = try await connection.query(PGQuery(unsafeSQL: Self.latestExit, binds: binds + [zoneName.pgBind()])).rows.first?
                .decodeIfPresent("day", as: String.self).flatMap { LocalDate($0) }
        }

        // Daily completion XP for every complete day up to today.
        // Every day of the history is classified once, for the awards and the streak alike.
        let classified = DayClassifier(habits: habits, records: records).classifyAll(through: today)
        let completeDays = Set(classified.filter { $0.classification == .complete }.map { LocalDate(dayNumber: $0.dayNumber) })
        let corrections = DailyCompletionXP.corrections(completeDays: completeDays, netAwards: netAwards, setting: dailyXP)
            .filter { abs($0.amount) <= 100_000 }
        if !corrections.isEmpty {
            let versions = corrections.map { _ -> Int64 in defer { next += 1 }; return next }
            try await connection.query(PGQuery(unsafeSQL: Self.insertAwards, binds: binds + [
                now.pgBind(), corrections.map { Int32($0.amount) }.pgBind(), corrections.map(\.reason).pgBind(),
                corrections.map { $0.date.description }.pgBind(), versions.pgBind(),
            ]))
            ledgerSum += corrections.reduce(0) { $0 + $1.amount }
        }

        let hasInputs = !habits.isEmpty || !records.isEmpty || ledgerSum != 0 || !netAwards.isEmpty || latestExit != nil
        guard hasInputs else { return next }
        let streak = GlobalStreak.compute(classified, today: today)
        let progress = UserProgress(ledgerSum: ledgerSum)
        let usage = UsageStreak.compute(exitDays: exitDays, today: today, latestExit: latestExit)

        var stored: [String: String] = [:]
        for row in try await connection.query(PGQuery(unsafeSQL: Self.current, binds: binds)).rows {
            stored[try row.decode("kind", as: String.self)] = try row.decode("record", as: String.self)
        }
        let wanted: [(kind: String, json: String, write: (Int64) -> PGQuery)] = [
            ("globalStreak", Self.json(streak), { version in self.upsertStreak(streak, version: version) }),
            ("userProgress", Self.json(progress), { version in self.upsertProgress(progress, version: version) }),
            ("usageStreak", Self.json(usage), { version in self.upsertUsage(usage, version: version) }),
        ]
        for item in wanted where Self.normalised(stored[item.kind]) != Self.normalised(item.json) {
            try await connection.query(item.write(next))
            next += 1
        }
        return next
    }

    // MARK: - Rows

    static func habit(_ row: PGRow) throws -> HabitDefinition? {
        guard let start = LocalDate(try row.decode("start_date", as: String.self)) else { return nil }
        let n = try row.decodeIfPresent("schedule_n", as: Int.self)
        let schedule: HabitSchedule
        switch try row.decode("schedule_type", as: String.self) {
        case "daily": schedule = .daily
        case "everyNDays": schedule = .everyNDays(max(1, n ?? 1))
        case "specificWeekdays": schedule = .specificWeekdays((try row.decodeIfPresent("schedule_weekdays", as: [String].self) ?? []).compactMap(Weekday.init(rawValue:)))
        case "frequencyWeekly": schedule = .frequencyWeekly(n ?? 1)
        default: schedule = .frequencyMonthly(n ?? 1)
        }
        return HabitDefinition(id: try row.decode("id"), habitType: try row.decode("habit_type"), schedule: schedule, startDate: start,
                               endDate: try row.decodeIfPresent("end_date", as: String.self).flatMap { LocalDate($0) })
    }

    /// The wire JSON the record functions of migration 0003 produce, for change detection.
    static func json(_ streak: GlobalStreak) -> String {
        "{\"computedFor\":\"\(streak.computedFor)\",\"currentStreak\":\(streak.currentStreak),\"lastCompleteDate\":\(streak.lastCompleteDate.map { "\"\($0)\"" } ?? "null"),\"longestStreak\":\(streak.longestStreak),\"totalCompleteDays\":\(streak.totalCompleteDays)}"
    }

    static func json(_ progress: UserProgress) -> String {
        "{\"currentLevel\":\(progress.currentLevel),\"totalXP\":\(progress.totalXP),\"xpForCurrentLevel\":\(progress.xpForCurrentLevel),\"xpForNextLevel\":\(progress.xpForNextLevel)}"
    }

    static func json(_ usage: UsageStreak) -> String {
        "{\"computedFor\":\"\(usage.computedFor)\",\"currentDayCount\":\(usage.currentDayCount),\"lastActivityDate\":\(usage.lastActivityDate.map { "\"\($0)\"" } ?? "null"),\"startDate\":\(usage.startDate.map { "\"\($0)\"" } ?? "null")}"
    }

    /// Compares JSON objects regardless of key order and spacing.
    static func normalised(_ json: String?) -> JSONValue? {
        guard let json else { return nil }
        return try? JSONParser.parse(Data(json.utf8))
    }

    func upsertStreak(_ s: GlobalStreak, version: Int64) -> PGQuery {
        """
        INSERT INTO global_streaks (tenant_id, user_id, id, current_streak, longest_streak, total_complete_days, last_complete_date, computed_for, updated_at, updated_by, server_version)
        VALUES (\(tenant), \(user), \(derivedRecordID), \(s.currentStreak), \(s.longestStreak), \(s.totalCompleteDays), \(s.lastCompleteDate?.description)::date, \(s.computedFor.description)::date, date_trunc('milliseconds', now()), 'server', \(version))
        ON CONFLICT (tenant_id, user_id) DO UPDATE SET current_streak = EXCLUDED.current_streak, longest_streak = EXCLUDED.longest_streak,
            total_complete_days = EXCLUDED.total_complete_days, last_complete_date = EXCLUDED.last_complete_date, computed_for = EXCLUDED.computed_for,
            updated_at = EXCLUDED.updated_at, updated_by = 'server', server_version = EXCLUDED.server_version, synced_at = now()
        """
    }

    func upsertProgress(_ p: UserProgress, version: Int64) -> PGQuery {
        """
        INSERT INTO user_progress (tenant_id, user_id, id, total_xp, current_level, xp_for_current_level, xp_for_next_level, updated_at, updated_by, server_version)
        VALUES (\(tenant), \(user), \(derivedRecordID), \(p.totalXP), \(p.currentLevel), \(p.xpForCurrentLevel), \(p.xpForNextLevel), date_trunc('milliseconds', now()), 'server', \(version))
        ON CONFLICT (tenant_id, user_id) DO UPDATE SET total_xp = EXCLUDED.total_xp, current_level = EXCLUDED.current_level,
            xp_for_current_level = EXCLUDED.xp_for_current_level, xp_for_next_level = EXCLUDED.xp_for_next_level,
            updated_at = EXCLUDED.updated_at, updated_by = 'server', server_version = EXCLUDED.server_version, synced_at = now()
        """
    }

    func upsertUsage(_ u: UsageStreak, version: Int64) -> PGQuery {
        """
        INSERT INTO usage_streaks (tenant_id, user_id, id, start_date, current_day_count, last_activity_date, computed_for, updated_at, updated_by, server_version)
        VALUES (\(tenant), \(user), \(derivedRecordID), \(u.startDate?.description)::date, \(u.currentDayCount), \(u.lastActivityDate?.description)::date, \(u.computedFor.description)::date, date_trunc('milliseconds', now()), 'server', \(version))
        ON CONFLICT (tenant_id, user_id) DO UPDATE SET start_date = EXCLUDED.start_date, current_day_count = EXCLUDED.current_day_count,
            last_activity_date = EXCLUDED.last_activity_date, computed_for = EXCLUDED.computed_for,
            updated_at = EXCLUDED.updated_at, updated_by = 'server', server_version = EXCLUDED.server_version, synced_at = now()
        """
    }
}
