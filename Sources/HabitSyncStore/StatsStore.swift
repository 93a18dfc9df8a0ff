import Foundation
import HabitSyncAuth
import HabitSyncDomain
import LibPQClient

/// The authenticated user's statistics, read from the analytics views (so the API and the
/// views give the same numbers by construction). Every query names the user explicitly as
/// well as running under the user's RLS context: either alone keeps other users out. The user
/// is named with values, never by a correlation, and where a view computes in `WITH` parts,
/// through a function that filters inside them (`analytics.user_focus_stats`): on Citus the
/// query then runs on the user's worker alone.
public struct StatsStore: Sendable {
    public let pool: PGPool
    public let statementTimeout: Duration

    public init(pool: PGPool, statementTimeout: Duration = .seconds(5)) {
        self.pool = pool
        self.statementTimeout = statementTimeout
    }

    /// Most (habit, day) rows one statistics request computes: a year of 1,000 daily habits
    /// (365,000) fits; ten years of them does not, and is refused with a 400 that says so
    /// rather than running into the statement timeout (BENCHMARKS.md, "Statistics").
    public static let maximumHabitDays: Int64 = 400_000

    static func habitDays(_ identity: VerifiedIdentity, from: LocalDate, to: LocalDate) -> PGQuery {
        "SELECT analytics.user_habit_days_in_range(\(identity.tenantID), \(identity.userID), \(from.description)::date, \(to.description)::date) AS habit_days"
    }

    static func habits(_ identity: VerifiedIdentity, from: LocalDate, to: LocalDate) -> PGQuery {
        """
        SELECT coalesce(json_agg(json_build_object('habitId', habit_id, 'name', habit_name, 'scheduleType', schedule_type,
                   'dueDays', due_days, 'completedDays', completed_days, 'completionRate', completion_rate, 'struggling', struggling)
                   ORDER BY habit_name, habit_id), '[]')::text AS habits
        FROM analytics.user_habit_completion_between(\(identity.tenantID), \(identity.userID), \(from.description)::date, \(to.description)::date)
        """
    }

    static func days(_ identity: VerifiedIdentity, from: LocalDate, to: LocalDate) -> PGQuery {
        """
        SELECT coalesce(json_agg(json_build_object('date', date, 'dueHabits', due_habits, 'completedHabits', completed_habits,
                   'completionRate', completion_rate, 'status', day_status) ORDER BY date), '[]')::text AS days
        FROM analytics.user_daily_habit_completion_between(\(identity.tenantID), \(identity.userID), \(from.description)::date, \(to.description)::date)
        """
    }

    static func focus(_ identity: VerifiedIdentity) -> PGQuery {
        """
        SELECT json_build_object('totalTrees', total_trees, 'totalFocusTime', total_focus_time, 'totalSessions', total_sessions,
                   'todaysTrees', todays_trees, 'todaysFocusTime', todays_focus_time, 'currentStreak', current_streak,
                   'longestStreak', longest_streak, 'abandonedCount', abandoned_count, 'completionRate', completion_rate)::text AS stats
        FROM analytics.user_focus_stats(\(identity.tenantID), \(identity.userID)) WHERE tenant_id = \(identity.tenantID) AND user_id = \(identity.userID)
        """
    }

    static func usage(_ identity: VerifiedIdentity) -> PGQuery {
        """
        SELECT json_build_object('hoursReclaimed', s.hours_reclaimed, 'totalConsciousExits', s.total_conscious_exits,
                   'averagePauseTime', s.average_pause_time, 'intentionalityScore', coalesce(s.intentionality_score, 0),
                   'trend', (SELECT coalesce(json_agg(json_build_object('date', t.date, 'consciousExits', t.conscious_exits,
                                 'events', t.events, 'pauseSeconds', t.pause_seconds) ORDER BY t.date), '[]') FROM analytics.usage_daily_trend t
                                 WHERE t.tenant_id = \(identity.tenantID) AND t.user_id = \(identity.userID)))::text AS stats
        FROM analytics.usage_stats s WHERE s.tenant_id = \(identity.tenantID) AND s.user_id = \(identity.userID)
        """
    }

    static func timeZone(_ identity: VerifiedIdentity) -> PGQuery {
        "SELECT time_zone FROM users WHERE tenant_id = \(identity.tenantID) AND user_id = \(identity.userID)"
    }

    private func read<T: Sendable>(_ identity: VerifiedIdentity, _ body: @Sendable (PGConnection) async throws -> T) async throws -> T {
        try await pool.withTransaction(isolation: .repeatableRead, readOnly: true, statementTimeout: statementTimeout) { connection in
            try await RequestScope.set(on: connection, tenantID: identity.tenantID, userID: identity.userID)
            return try await body(connection)
        }
    }

    /// The user's today in their time zone (UTC before they have settings).
    public func today(_ identity: VerifiedIdentity, now: Date = Date()) async throws -> LocalDate {
        let zone = try await read(identity) { try await $0.query(Self.timeZone(identity)).rows.first?.decode("time_zone", as: String.self) }
        return LocalDate(now, in: zone.flatMap(TimeZone.init(identifier:)) ?? .gmt)
    }

    /// `{"from", "to", "habits": [...], "days": [...]}` as JSON text.
    public func habitStats(_ identity: VerifiedIdentity, from: LocalDate, to: LocalDate) async throws -> String {
        try await read(identity) { connection in
            let habitDays = try await connection.query(Self.habitDays(identity, from: from, to: to)).single().decode("habit_days", as: Int64.self)
            guard habitDays <= Self.maximumHabitDays else {
                throw StoreError(
                    .rangeTooLarge,
                    "from \(from) to \(to) covers \(habitDays) habit-days (live habits × their days in the range), more than the \(Self.maximumHabitDays) one request computes; ask for a shorter range"
                )
            }
            let habits = try await connection.query(Self.habits(identity, from: from, to: to)).single().decode("habits", as: String.self)
            let days = try await connection.query(Self.days(identity, from: from, to: to)).single().decode("days", as: String.self)
            return "{\"from\":\"\(from)\",\"to\":\"\(to)\",\"habits\":\(habits),\"days\":\(days)}"
        }
    }

    public func focusStats(_ identity: VerifiedIdentity) async throws -> String {
        try await read(identity) { connection in
            try await connection.query(Self.focus(identity)).rows.first?.decode("stats", as: String.self)
                ?? #"{"totalTrees":0,"totalFocusTime":0,"totalSessions":0,"todaysTrees":0,"todaysFocusTime":0,"currentStreak":0,"longestStreak":0,"abandonedCount":0,"completionRate":0}"#
        }
    }

    public func usageStats(_ identity: VerifiedIdentity) async throws -> String {
        try await read(identity) { connection in
            try await connection.query(Self.usage(identity)).rows.first?.decode("stats", as: String.self)
                ?? #"{"hoursReclaimed":0,"totalConsciousExits":0,"averagePauseTime":0,"intentionalityScore":0,"trend":[]}"#
        }
    }
}
