import Foundation
import HabitSyncStore
import LibPQClient
import TestSupport
import Testing

/// `analytics.usage_daily_trend` (migration 0030): the last 30 days of a user's usage events,
/// read through `usage_events_by_time` instead of joining every day to the user's whole
/// history, and still exactly the events of each calendar day in the user's time zone.
@Suite struct UsageDailyTrendTests {
    /// Inserts usage events of `user`, one every `minutes` minutes back from now for `days`
    /// days (every third an exit), as the tables' owner within the user's scope.
    static func seed(_ owner: PGPool, tenant: UUID, user: String, timeZone: String, days: Int, minutes: Int) async throws {
        try await owner.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            try await connection.query("INSERT INTO users (tenant_id, user_id, time_zone) VALUES (\(tenant), \(user), \(timeZone))")
            try await connection.query(
                """
                INSERT INTO usage_events (tenant_id, user_id, id, event_type, occurred_at, pause_duration, timer_duration, updated_at, updated_by, server_version)
                SELECT \(tenant), \(user), gen_random_uuid(), CASE WHEN g % 3 = 0 THEN 'exit_to_focus' ELSE 'deepen_pause' END,
                       date_trunc('second', now()) - g * \(minutes)::int * interval '1 minute', g % 7, 10, now(), 'seed', g
                FROM generate_series(1, \(days * 24 * 60 / minutes)::int) g
                """)
        }
    }

    /// The view's rows for `user`, and what reading them cost in usage_events' partitions. Read
    /// in a session whose own time zone is far from UTC and from the user's, as an analyst's
    /// `psql` may be: the view must not depend on it.
    static func trend(_ owner: PGPool, tenant: UUID, user: String) async throws -> (rows: [String], read: Int64) {
        try await owner.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            try await connection.simpleQuery(unsafeSQL: "SET LOCAL TimeZone = 'Pacific/Chatham'")
            let rows = try await connection.query(
                """
                SELECT date::text || ' ' || conscious_exits || ' ' || events || ' ' || pause_seconds AS line
                FROM analytics.usage_daily_trend WHERE user_id = \(user) ORDER BY date
                """
            ).rows.map { try $0.decode("line", as: String.self) }
            let read = try await connection.query(
                """
                SELECT coalesce(sum(coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0)), 0)::int8 AS read
                FROM pg_stat_xact_user_tables WHERE relname LIKE 'usage\\_events\\_%'
                """
            ).single().decode("read", as: Int64.self)
            return (rows, read)
        }
    }

    /// The definition before migration 0030, every day joined to every event of the user: the
    /// reference the view must equal.
    static func reference(_ owner: PGPool, tenant: UUID, user: String) async throws -> [String] {
        try await owner.withTransaction { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            return try await connection.query(
                """
                SELECT d.day::date::text || ' ' || count(e.id) FILTER (WHERE e.event_type = 'exit_to_focus') || ' ' || count(e.id)
                       || ' ' || coalesce(sum(e.pause_duration), 0) AS line
                FROM users u
                CROSS JOIN LATERAL generate_series((now() AT TIME ZONE u.time_zone)::date - 29, (now() AT TIME ZONE u.time_zone)::date, interval '1 day') AS d(day)
                LEFT JOIN usage_events e ON e.tenant_id = u.tenant_id AND e.user_id = u.user_id AND (e.occurred_at AT TIME ZONE u.time_zone)::date = d.day::date
                WHERE u.tenant_id = \(tenant) AND u.user_id = \(user)
                GROUP BY d.day ORDER BY d.day
                """
            ).rows.map { try $0.decode("line", as: String.self) }
        }
    }

    static func tenant(_ owner: PGPool) async throws -> UUID {
        let tenant = UUID()
        try await owner.withConnection { try await $0.query("INSERT INTO tenants (id, name, daily_completion_xp) VALUES (\(tenant), \(tenant.uuidString), 10)") }
        return tenant
    }

    /// Users far east and west of UTC, on half and quarter hours, with daylight saving time
    /// (Santiago's changes at midnight), each with an event every 23 minutes for 35 days: the
    /// view gives exactly the reference's 30 days.
    @Test func eachDayHoldsExactlyItsEventsInTheUsersTimeZone() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { owner in
            let tenant = try await Self.tenant(owner)
            let zones = ["UTC", "Pacific/Kiritimati", "Pacific/Niue", "America/Santiago", "Asia/Kathmandu", "Australia/Lord_Howe", "America/St_Johns"]
            for (index, zone) in zones.enumerated() {
                let user = "trend-\(index)"
                try await Self.seed(owner, tenant: tenant, user: user, timeZone: zone, days: 35, minutes: 23)
                let expected = try await Self.reference(owner, tenant: tenant, user: user)
                #expect(expected.count == 30, "\(zone)")
                let got = try await Self.trend(owner, tenant: tenant, user: user).rows
                #expect(got == expected, "\(zone): \(got.filter { !expected.contains($0) }) instead of \(expected.filter { !got.contains($0) })")
            }
        }
    }

    /// The bound the view reads events within, [now − 32 days, now + 2 days), holds every
    /// instant of the 30 calendar days before and including the user's today, for moments
    /// `now` over two years in six zones from −11 to +14 hours, and hour by hour around
    /// Samoa's skipped 30 December 2011 (−10 to +14 hours).
    @Test func theWindowsBoundHoldsEveryInstantOfItsDays() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { owner in
            let (checked, outside) = try await owner.withConnection { connection in
                let row = try await connection.query(
                    """
                    WITH moments AS (
                        SELECT z, n FROM unnest(ARRAY['Pacific/Apia', 'America/Santiago', 'Australia/Lord_Howe', 'Pacific/Kiritimati', 'Pacific/Niue', 'Europe/Berlin']) z,
                                         generate_series(timestamptz '2011-01-01', timestamptz '2012-12-31', interval '61 hours') n
                        UNION ALL
                        SELECT 'Pacific/Apia', n FROM generate_series(timestamptz '2011-12-27', timestamptz '2012-01-04', interval '1 hour') n),
                    window_days AS (
                        SELECT z, n, t FROM moments, generate_series(n - interval '34 days', n + interval '3 days', interval '20 minutes') t
                        WHERE (t AT TIME ZONE z)::date BETWEEN (n AT TIME ZONE z)::date - 29 AND (n AT TIME ZONE z)::date)
                    SELECT count(*)::int8 AS checked,
                           count(*) FILTER (WHERE NOT (t >= n - interval '32 days' AND t < n + interval '2 days'))::int8 AS outside
                    FROM window_days
                    """
                ).single()
                return (try row.decode("checked", as: Int64.self), try row.decode("outside", as: Int64.self))
            }
            #expect(checked > 1_000_000)
            #expect(outside == 0)
        }
    }

    /// A user with three years of events: the view reads about the window's days, not the
    /// history (before migration 0030, every event of the user, and a sort of 30 times as many).
    @Test func theTrendReadsTheWindowNotTheHistory() async throws {
        // Citus reads on the workers, which the coordinator's counters do not see.
        guard !TestPostgres.onCitus else { return }
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { owner in
            let tenant = try await Self.tenant(owner)
            // 40 minutes apart for three years: 39,420 events, 36 a day.
            try await Self.seed(owner, tenant: tenant, user: "veteran", timeZone: "Europe/Berlin", days: 3 * 365, minutes: 40)
            try await owner.withConnection { try await $0.simpleQuery(unsafeSQL: "ANALYZE usage_events; ANALYZE users") }
            let (rows, read) = try await Self.trend(owner, tenant: tenant, user: "veteran")
            #expect(rows.count == 30)
            #expect(rows == (try await Self.reference(owner, tenant: tenant, user: "veteran")))
            // The window's 32 days (about 1,150 events), or at worst the two monthly partitions
            // it touches: far below the history's 39,420.
            #expect(read <= 4_000, "usage_events rows read: \(read)")
        }
    }
}
