import Foundation
import LibPQClient
import TestSupport

/// Valid rows for every per-tenant table, as column → SQL expression, with `{T}` (tenant),
/// `{U}` (user) and `{H}` (an existing habit of that user) filled in per use. The CHECK
/// tests break one column at a time; the RLS tests insert one row per tenant and table.
enum SchemaFixture {
    static let baseRows: [String: [String: String]] = [
        "users": ["tenant_id": "{T}", "user_id": "{U}"],
        "devices": ["tenant_id": "{T}", "user_id": "{U}", "device_id": "'iphone-1'"],
        "habits": sync + [
            "id": "gen_random_uuid()", "name": "'Read'", "habit_description": "''", "icon": "''", "color": "NULL",
            "habit_type": "'formation'", "goal_count": "1", "goal_unit": "'pages'", "schedule_type": "'daily'",
            "schedule_n": "NULL", "schedule_weekdays": "NULL", "baseline_count": "NULL", "baseline_unit": "NULL",
            "start_date": "'2026-01-01'", "end_date": "NULL", "created_at": "now()",
        ],
        "reminders": sync + ["id": "gen_random_uuid()", "habit_id": "{H}", "time_of_day": "'07:30'", "is_active": "true", "notification_identifier": "NULL"],
        "daily_progress": sync + [
            "id": "gen_random_uuid()", "habit_id": "{H}", "date": "'2026-11-20'", "progress_count": "1", "goal_count": "1",
            "timestamps": "ARRAY[now()]::timestamptz[]", "difficulty": "NULL", "skip_reason": "NULL", "skip_note": "NULL",
        ],
        "xp_transactions": sync + ["id": "gen_random_uuid()", "amount": "50", "reason": "'daily_completion'", "occurred_at": "now()", "date": "'2026-11-20'"],
        "achievements": sync + [
            "id": "gen_random_uuid()", "achievement_id": "'first_habit'", "title": "'First habit'", "description": "''",
            "unlocked_at": "now()", "xp_awarded": "0",
        ],
        "focus_sessions": sync + [
            "id": "gen_random_uuid()", "start_time": "'2026-11-20 08:00:00+00'", "end_time": "'2026-11-20 08:25:00+00'",
            "state": "'completed'", "duration": "1500", "paused_duration": "0", "created_at": "'2026-11-20 08:00:00+00'",
        ],
        "usage_events": sync + [
            "id": "gen_random_uuid()", "event_type": "'exit_to_focus'", "occurred_at": "'2026-11-20 08:00:00+00'",
            "target_app_name": "NULL", "pause_duration": "10", "timer_duration": "30",
        ],
        "selected_apps": sync + [
            "id": "gen_random_uuid()", "app_name": "'Instagram'", "icon_name": "'camera'", "url_scheme": "'instagram://'",
            "is_installed": "true", "date_added": "now()", "order_index": "0",
        ],
        "user_settings": sync + [
            "id": "gen_random_uuid()", "timezone": "'Europe/Berlin'", "gateway_timer_duration": "30", "onboarding_determination_level": "5",
            "selected_interest_tags": "ARRAY['focus']", "fre_phase": "'notStarted'", "has_completed_onboarding": "false",
        ],
        "global_streaks": sync + [
            "id": "gen_random_uuid()", "current_streak": "2", "longest_streak": "5", "total_complete_days": "9",
            "last_complete_date": "'2026-11-19'", "computed_for": "'2026-11-20'",
        ],
        "user_progress": sync + ["id": "gen_random_uuid()", "total_xp": "350", "current_level": "2", "xp_for_current_level": "50", "xp_for_next_level": "900"],
        "usage_streaks": sync + ["id": "gen_random_uuid()", "start_date": "'2026-11-18'", "current_day_count": "3", "last_activity_date": "'2026-11-20'", "computed_for": "'2026-11-20'"],
        "push_batches": [
            "tenant_id": "{T}", "user_id": "{U}", "device_id": "'iphone-1'", "batch_id": "gen_random_uuid()",
            "request_sha256": "sha256('x'::bytea)", "response_status": "200", "response_body": "'{}'::bytea",
        ],
        "conflict_log": [
            "tenant_id": "{T}", "user_id": "{U}", "collection": "'habits'", "record_id": "'abc'", "outcome": "'rejected'",
            "error_code": "'invalid_field'", "error_field": "'goalCount'", "op": "'upsert'", "incoming_payload": "'{}'::jsonb",
        ],
        "data_migrations": ["tenant_id": "{T}", "user_id": "{U}", "name": "'legacy_import:x'", "status": "'completed'", "completed_at": "now()"],
        "legacy_import_archive": [
            "tenant_id": "{T}", "user_id": "{U}", "source_sha256": "encode(sha256('f'::bytea), 'hex')", "position": "0", "source": "'{}'::jsonb",
        ],
        "tenant_keys": ["tenant_id": "{T}", "algorithm": "'HS256'", "hs256_secret": "sha256('k'::bytea)"],
    ]

    static var sync: [String: String] {
        [
            "tenant_id": "{T}", "user_id": "{U}", "updated_at": "now()", "updated_by": "'iphone-1'",
            "server_version": "(1000 + floor(random() * 1e12))::bigint",
        ]
    }

    /// Tables in foreign-key order (users before what refers to them).
    static let insertOrder = [
        "users", "devices", "habits", "reminders", "daily_progress", "xp_transactions", "achievements", "focus_sessions",
        "usage_events", "selected_apps", "user_settings", "global_streaks", "user_progress", "usage_streaks",
        "push_batches", "conflict_log", "data_migrations", "legacy_import_archive", "tenant_keys",
    ]

    static func insert(_ table: String, tenant: UUID, user: String, habit: UUID?, overrides: [String: String] = [:]) -> PGQuery {
        var row = baseRows[table]!
        for (column, value) in overrides { row[column] = value }
        let columns = row.keys.sorted()
        let values = columns.map { column in
            row[column]!
                .replacingOccurrences(of: "{T}", with: "'\(tenant.uuidString.lowercased())'")
                .replacingOccurrences(of: "{U}", with: "'\(user.replacingOccurrences(of: "'", with: "''"))'")
                .replacingOccurrences(of: "{H}", with: habit.map { "'\($0.uuidString.lowercased())'" } ?? "NULL")
        }
        // Test-owned constants only: the loud initialiser is deliberate.
        return PGQuery(unsafeSQL: "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))")
    }

    /// Sets the transaction's tenant (and user) the way the server does.
    static func setContext(_ connection: PGConnection, tenant: UUID?, user: String?) async throws {
        // As RequestScope does: no user means tenant-wide work, which must say so (migration 0008).
        try await connection.query(
            """
            SELECT set_config('habitsync.tenant_id', \(tenant?.uuidString.lowercased() ?? ""), true), set_config('habitsync.user_id', \(user ?? ""), true),
                   set_config('habitsync.scope', \(user == nil ? "tenant" : "user"), true)
            """)
    }

    /// A tenant with a user and one live habit, created as the owner.
    static func seedTenant(_ pool: PGPool, name: String, users: [String]) async throws -> (tenant: UUID, habits: [String: UUID]) {
        let tenant = UUID()
        try await pool.withConnection { try await $0.query("INSERT INTO tenants (id, name) VALUES (\(tenant), \(name))") }
        var habits: [String: UUID] = [:]
        for user in users {
            let habit = UUID()
            try await pool.withTransaction { connection in
                try await setContext(connection, tenant: tenant, user: user)
                try await connection.query(insert("users", tenant: tenant, user: user, habit: nil))
                try await connection.query(insert("habits", tenant: tenant, user: user, habit: nil, overrides: ["id": "'\(habit.uuidString.lowercased())'"]))
            }
            habits[user] = habit
        }
        return (tenant, habits)
    }
}

extension Dictionary where Key == String, Value == String {
    static func + (lhs: Self, rhs: Self) -> Self { lhs.merging(rhs) { _, new in new } }
}
