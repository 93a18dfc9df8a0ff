import Foundation
import LibPQClient
import TestSupport
import Testing

/// The text record functions of migration 0007 (what pull sends) must render the same JSON
/// values as the jsonb record functions of 0003 (the reference analysts use), for every
/// collection and for the awkward values: NULLs, escapes, every schedule shape, empty and
/// long arrays, dates at the edges.
@Suite struct WireRecordParityTests {
    static let awkwardText = #"E'Say "hi" \\ back\\slash \n new line \t tab \u0001 control ☀️ é'"#

    static let variants: [String: [[String: String]]] = [
        "habits": [
            [:],
            ["name": awkwardText, "habit_description": awkwardText, "icon": "'figure.walk'", "color": "'#A1b2C3ff'"],
            ["schedule_type": "'everyNDays'", "schedule_n": "3", "end_date": "'2026-12-31'"],
            ["schedule_type": "'specificWeekdays'", "schedule_weekdays": "ARRAY['monday','friday']"],
            ["schedule_type": "'frequencyMonthly'", "schedule_n": "31"],
            ["habit_type": "'breaking'", "goal_count": "3", "baseline_count": "4", "baseline_unit": "'cigarettes'"],
            ["start_date": "'0001-01-01'", "created_at": "'1970-01-01 00:00:00.001+00'"],
            ["sort_order": "0"], ["sort_order": "2147483647"],
        ],
        "reminders": [[:], ["time_of_day": "'23:59'", "is_active": "false", "notification_identifier": awkwardText]],
        "daily_progress": [
            [:],
            ["timestamps": "ARRAY[]::timestamptz[]", "difficulty": "5", "skip_reason": "'rest'", "skip_note": awkwardText, "date": "'2026-11-21'"],
            ["timestamps": "ARRAY['2026-11-20 23:59:59.999+00', '2026-11-20 00:00:00+05:30', now()]::timestamptz[]", "date": "'2026-11-22'"],
        ],
        "xp_transactions": [[:], ["amount": "-100000", "reason": awkwardText, "date": "NULL"]],
        "achievements": [[:], ["achievement_id": "'streak_7'", "title": awkwardText, "description": awkwardText, "xp_awarded": "250"]],
        "focus_sessions": [
            [:],
            ["state": "'active'", "end_time": "NULL", "duration": "0", "paused_duration": "0", "start_time": "'2026-11-21 08:00:00+00'"],
            ["state": "'abandoned'", "duration": "1500", "paused_duration": "0.30000000000000004", "start_time": "'2026-11-19 08:00:00+00'", "end_time": "'2026-11-19 09:00:00+00'"],
        ],
        "usage_events": [
            [:],
            ["event_type": "'proceed_to_app'", "target_app_name": awkwardText, "pause_duration": "0", "timer_duration": "3600"],
            ["event_type": "'deepen_pause'", "occurred_at": "'1999-01-01 00:00:00+00'"],
        ],
        "selected_apps": [[:], ["app_name": awkwardText, "url_scheme": "'fb://profile'", "is_installed": "false", "order_index": "7"]],
        "user_settings": [[:]],
        "global_streaks": [[:]],
        "user_progress": [[:]],
        "usage_streaks": [["start_date": "NULL", "last_activity_date": "NULL", "current_day_count": "0"]],
    ]

    /// What pull passes the daily-progress function: its timestamps, rendered.
    static let renderedTimestamps = "(SELECT string_agg(habitsync_json_time(x), ',' ORDER BY o) FROM unnest(t.timestamps) WITH ORDINALITY AS u(x, o))"

    static let functions: [(table: String, jsonb: String, text: String)] = [
        ("habits", "habitsync_habit_record", "habitsync_habit_record_json"),
        ("reminders", "habitsync_reminder_record", "habitsync_reminder_record_json"),
        ("daily_progress", "habitsync_daily_progress_record", "habitsync_daily_progress_record_json"),
        ("xp_transactions", "habitsync_xp_transaction_record", "habitsync_xp_transaction_record_json"),
        ("achievements", "habitsync_achievement_record", "habitsync_achievement_record_json"),
        ("focus_sessions", "habitsync_focus_session_record", "habitsync_focus_session_record_json"),
        ("usage_events", "habitsync_usage_event_record", "habitsync_usage_event_record_json"),
        ("selected_apps", "habitsync_selected_app_record", "habitsync_selected_app_record_json"),
        ("user_settings", "habitsync_user_settings_record", "habitsync_user_settings_record_json"),
        ("global_streaks", "habitsync_global_streak_record", "habitsync_global_streak_record_json"),
        ("user_progress", "habitsync_user_progress_record", "habitsync_user_progress_record_json"),
        ("usage_streaks", "habitsync_usage_streak_record", "habitsync_usage_streak_record_json"),
    ]

    /// One user of a new tenant with every row of `variants`.
    static func seedVariants(_ pool: PGPool, tenantName: String) async throws {
        let seeded = try await SchemaFixture.seedTenant(pool, name: tenantName, users: ["u1"])
        let (tenant, habit) = (seeded.tenant, seeded.habits["u1"]!)
        try await pool.withTransaction { connection in
            try await SchemaFixture.setContext(connection, tenant: tenant, user: "u1")
            for (table, rows) in variants {
                for overrides in rows {
                    try await connection.query(SchemaFixture.insert(table, tenant: tenant, user: "u1", habit: habit, overrides: overrides))
                }
            }
        }
    }

    @Test func textRecordsEqualTheJSONBRecordsForEveryCollection() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let pool = database.pool(size: 2)
        defer { pool.close() }
        try await Self.seedVariants(pool, tenantName: "parity")
        #expect(Set(Self.functions.map(\.table)) == Set(Self.variants.keys), "every collection is covered")
        for function in Self.functions {
            let call = function.table == "daily_progress" ? "\(function.text)(t, \(Self.renderedTimestamps))" : "\(function.text)(t)"
            // Test-owned identifiers only. `::jsonb` also proves the text is valid JSON.
            let row = try await pool.withConnection {
                try await $0.query(
                    PGQuery(
                        unsafeSQL: """
                            SELECT count(*)::int8 AS rows,
                                   count(*) FILTER (WHERE \(call)::jsonb IS DISTINCT FROM \(function.jsonb)(t))::int8 AS different,
                                   min(\(call)) FILTER (WHERE \(call)::jsonb IS DISTINCT FROM \(function.jsonb)(t)) AS example,
                                   count(*) FILTER (WHERE \(call) IS NULL)::int8 AS nulls
                            FROM \(function.table) t WHERE deleted_at IS NULL
                            """)
                ).single()
            }
            let rows = try row.decode("rows", as: Int64.self)
            #expect(rows >= Int64(Self.variants[function.table]!.count), "\(function.table): \(rows) rows")
            let example = try row.decodeIfPresent("example", as: String.self) ?? ""
            #expect(try row.decode("different", as: Int64.self) == 0, "\(function.table): \(example)")
            #expect(try row.decode("nulls", as: Int64.self) == 0, "\(function.table): a NULL rendering")

            // Inlined: the plan computes the expression itself, calling none of our functions
            // (a SQL function that is not inlined costs more per row than the rendering).
            let plan = try await pool.withConnection {
                try await $0.query(PGQuery(unsafeSQL: "EXPLAIN (VERBOSE) SELECT \(call) FROM \(function.table) t")).rows
                    .map { try $0.decode(at: 0, as: String.self) }.joined(separator: "\n")
            }
            #expect(!plan.contains("habitsync_json") && !plan.contains(function.text), "\(function.text) is not inlined:\n\(plan)")
        }
    }
}
