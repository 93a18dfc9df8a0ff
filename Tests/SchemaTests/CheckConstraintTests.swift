import Foundation
import LibPQClient
import TestSupport
import Testing

/// Every CHECK mirrors a rule of docs/data-model.md: it rejects what the rule rejects and accepts
/// the boundary values. One column is changed from a valid row at a time.
@Suite struct CheckConstraintTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let table: String
        let overrides: [String: String]
        let accepted: Bool
        var testDescription: String {
            "\(table) \(overrides.map { "\($0.key)=\($0.value.prefix(40))" }.sorted().joined(separator: ", ")) → \(accepted ? "accepted" : "rejected")"
        }
    }

    static func ok(_ table: String, _ overrides: [String: String]) -> Case { Case(table: table, overrides: overrides, accepted: true) }
    static func no(_ table: String, _ overrides: [String: String]) -> Case { Case(table: table, overrides: overrides, accepted: false) }
    static func chars(_ n: Int) -> String { "repeat('x', \(n))" }

    static let cases: [Case] = [
        // habits
        ok("habits", [:]),
        ok("habits", ["name": chars(200)]), no("habits", ["name": chars(201)]), no("habits", ["name": "''"]), no("habits", ["name": "'   '"]),
        ok("habits", ["name": "'  x  '"]),
        ok("habits", ["habit_description": chars(2000)]), no("habits", ["habit_description": chars(2001)]),
        ok("habits", ["icon": chars(100)]), no("habits", ["icon": chars(101)]),
        ok("habits", ["color": "'#A1b2C3'"]), ok("habits", ["color": "'#a1b2c3ff'"]), no("habits", ["color": "'A1B2C3'"]),
        no("habits", ["color": "'#12345'"]), no("habits", ["color": "'#1234567'"]), no("habits", ["color": "'#GGGGGG'"]),
        no("habits", ["habit_type": "'other'"]),
        no("habits", ["habit_type": "'breaking'"]),
        ok("habits", ["habit_type": "'breaking'", "goal_count": "3", "baseline_count": "4"]),
        no("habits", ["habit_type": "'breaking'", "goal_count": "3", "baseline_count": "3"]),
        no("habits", ["goal_count": "0"]), no("habits", ["goal_count": "-1"]), ok("habits", ["goal_count": "1"]),
        no("habits", ["goal_unit": "''"]), ok("habits", ["goal_unit": chars(50)]), no("habits", ["goal_unit": chars(51)]),
        no("habits", ["schedule_type": "'weekly'"]), no("habits", ["schedule_n": "2"]),
        no("habits", ["schedule_type": "'everyNDays'", "schedule_n": "0"]), ok("habits", ["schedule_type": "'everyNDays'", "schedule_n": "1"]),
        no("habits", ["schedule_type": "'everyNDays'"]),
        ok("habits", ["schedule_type": "'specificWeekdays'", "schedule_weekdays": "ARRAY['monday','friday']"]),
        ok("habits", ["schedule_type": "'specificWeekdays'", "schedule_weekdays": "ARRAY['sunday','monday','tuesday','wednesday','thursday','friday','saturday']"]),
        no("habits", ["schedule_type": "'specificWeekdays'", "schedule_weekdays": "ARRAY[]::text[]"]),
        no("habits", ["schedule_type": "'specificWeekdays'", "schedule_weekdays": "ARRAY['monday','monday']"]),
        no("habits", ["schedule_type": "'specificWeekdays'", "schedule_weekdays": "ARRAY['funday']"]),
        no("habits", ["schedule_type": "'specificWeekdays'", "schedule_weekdays": "ARRAY['Monday']"]),
        no("habits", ["schedule_type": "'specificWeekdays'"]),
        ok("habits", ["schedule_type": "'frequencyWeekly'", "schedule_n": "1"]), ok("habits", ["schedule_type": "'frequencyWeekly'", "schedule_n": "7"]),
        no("habits", ["schedule_type": "'frequencyWeekly'", "schedule_n": "0"]), no("habits", ["schedule_type": "'frequencyWeekly'", "schedule_n": "8"]),
        ok("habits", ["schedule_type": "'frequencyMonthly'", "schedule_n": "31"]), no("habits", ["schedule_type": "'frequencyMonthly'", "schedule_n": "32"]),
        no("habits", ["schedule_type": "'frequencyMonthly'", "schedule_n": "0"]),
        ok("habits", ["end_date": "'2026-01-01'"]), no("habits", ["end_date": "'2025-12-31'"]),
        no("habits", ["name": "NULL"]), no("habits", ["start_date": "NULL"]),
        ok(
            "habits",
            [
                "name": "NULL", "habit_type": "NULL", "goal_count": "NULL", "goal_unit": "NULL", "schedule_type": "NULL",
                "start_date": "NULL", "created_at": "NULL", "habit_description": "NULL", "icon": "NULL", "deleted_at": "now()",
            ]),
        no("habits", ["updated_by": "''"]), ok("habits", ["updated_by": chars(100)]), no("habits", ["updated_by": chars(101)]),
        no("habits", ["server_version": "0"]),
        // reminders
        ok("reminders", [:]), ok("reminders", ["time_of_day": "'23:59'"]), no("reminders", ["time_of_day": "'07:30:15'"]),
        no("reminders", ["is_active": "NULL"]), no("reminders", ["habit_id": "NULL"]),
        // daily progress
        ok("daily_progress", ["progress_count": "0"]), no("daily_progress", ["progress_count": "-1"]),
        no("daily_progress", ["goal_count": "0"]), ok("daily_progress", ["goal_count": "1"]),
        no("daily_progress", ["difficulty": "0"]), ok("daily_progress", ["difficulty": "1"]), ok("daily_progress", ["difficulty": "5"]),
        no("daily_progress", ["difficulty": "6"]),
        ok("daily_progress", ["skip_reason": "'rest'"]), ok("daily_progress", ["skip_reason": "'emergency'"]), no("daily_progress", ["skip_reason": "'lazy'"]),
        ok("daily_progress", ["skip_note": chars(500)]), no("daily_progress", ["skip_note": chars(501)]),
        ok("daily_progress", ["timestamps": "array_fill(now()::timestamptz, ARRAY[1000])"]),
        no("daily_progress", ["timestamps": "array_fill(now()::timestamptz, ARRAY[1001])"]),
        no("daily_progress", ["timestamps": "ARRAY[NULL]::timestamptz[]"]), ok("daily_progress", ["timestamps": "ARRAY[]::timestamptz[]"]),
        no("daily_progress", ["date": "NULL"]),
        // xp ledger
        no("xp_transactions", ["amount": "0"]), ok("xp_transactions", ["amount": "100000"]), ok("xp_transactions", ["amount": "-100000"]),
        no("xp_transactions", ["amount": "100001"]), no("xp_transactions", ["amount": "-100001"]),
        no("xp_transactions", ["reason": "''"]), ok("xp_transactions", ["reason": chars(200)]), no("xp_transactions", ["reason": chars(201)]),
        ok("xp_transactions", ["date": "NULL"]),
        // achievements
        no("achievements", ["achievement_id": "''"]), ok("achievements", ["achievement_id": chars(100)]), no("achievements", ["achievement_id": chars(101)]),
        no("achievements", ["xp_awarded": "-1"]), ok("achievements", ["xp_awarded": "0"]),
        // focus sessions
        ok("focus_sessions", ["duration": "0"]), no("focus_sessions", ["duration": "-1"]), no("focus_sessions", ["duration": "1500.5"]),
        no("focus_sessions", ["paused_duration": "-1"]), ok("focus_sessions", ["paused_duration": "0"]),
        ok("focus_sessions", ["state": "'active'", "end_time": "NULL"]), ok("focus_sessions", ["state": "'paused'", "end_time": "NULL"]),
        no("focus_sessions", ["state": "'active'"]), no("focus_sessions", ["state": "'completed'", "end_time": "NULL"]),
        no("focus_sessions", ["state": "'abandoned'", "end_time": "NULL"]),
        no("focus_sessions", ["end_time": "'2026-11-20 07:59:59+00'"]), ok("focus_sessions", ["end_time": "'2026-11-20 08:00:00+00'"]),
        no("focus_sessions", ["state": "'running'"]),
        // usage events
        no("usage_events", ["event_type": "'opened'"]), ok("usage_events", ["event_type": "'deepen_pause'"]),
        no("usage_events", ["event_type": "'proceed_to_app'"]), no("usage_events", ["event_type": "'proceed_to_app'", "target_app_name": "' '"]),
        ok("usage_events", ["event_type": "'proceed_to_app'", "target_app_name": "'Instagram'"]),
        ok("usage_events", ["pause_duration": "30"]), no("usage_events", ["pause_duration": "30.5"]), no("usage_events", ["pause_duration": "-1"]),
        no("usage_events", ["timer_duration": "0"]), ok("usage_events", ["occurred_at": "'1999-01-01 00:00:00+00'"]),
        // selected apps
        ok("selected_apps", ["url_scheme": "'fb://profile'"]), no("selected_apps", ["url_scheme": "'instagram'"]),
        no("selected_apps", ["url_scheme": "'://x'"]), no("selected_apps", ["icon_name": "''"]),
        no("selected_apps", ["order_index": "-1"]), ok("selected_apps", ["order_index": "0"]),
        // user settings
        no("user_settings", ["gateway_timer_duration": "14"]), ok("user_settings", ["gateway_timer_duration": "15"]),
        ok("user_settings", ["gateway_timer_duration": "45"]), no("user_settings", ["gateway_timer_duration": "46"]),
        no("user_settings", ["onboarding_determination_level": "0"]), ok("user_settings", ["onboarding_determination_level": "1"]),
        ok("user_settings", ["onboarding_determination_level": "10"]), no("user_settings", ["onboarding_determination_level": "11"]),
        no("user_settings", ["fre_phase": "'phase3Complete'"]), ok("user_settings", ["fre_phase": "'phase2Complete'"]),
        ok("user_settings", ["timezone": "'America/Argentina/Buenos_Aires'"]), no("user_settings", ["timezone": "'Not a zone!'"]),
        // derived records
        no("global_streaks", ["longest_streak": "1"]), no("global_streaks", ["last_complete_date": "NULL"]),
        ok("global_streaks", ["current_streak": "0", "last_complete_date": "NULL"]), no("global_streaks", ["current_streak": "-1"]),
        ok("user_progress", ["total_xp": "0", "current_level": "1", "xp_for_current_level": "0", "xp_for_next_level": "300"]),
        ok("user_progress", ["total_xp": "1200", "current_level": "3", "xp_for_current_level": "0", "xp_for_next_level": "1500"]),
        no("user_progress", ["total_xp": "299", "current_level": "2"]), no("user_progress", ["current_level": "0"]),
        no("user_progress", ["total_xp": "-1"]), no("user_progress", ["xp_for_next_level": "300"]),
        no("usage_streaks", ["start_date": "NULL"]), ok("usage_streaks", ["current_day_count": "0", "start_date": "NULL", "last_activity_date": "NULL"]),
        // keys and bookkeeping
        ok("tenant_keys", [:]), no("tenant_keys", ["hs256_secret": "'short'::bytea"]),
        no("tenant_keys", ["algorithm": "'ES256'"]),
        ok("tenant_keys", ["algorithm": "'ES256'", "hs256_secret": "NULL", "public_key_pem": "'-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----'"]),
        no("tenant_keys", ["algorithm": "'none'"]),
        no("push_batches", ["request_sha256": "'\\x00'::bytea"]), no("push_batches", ["response_status": "100"]),
        no("conflict_log", ["error_code": "NULL"]), ok("conflict_log", ["outcome": "'superseded'", "error_code": "NULL"]),
        no("conflict_log", ["outcome": "'lost'"]),
        no("data_migrations", ["completed_at": "NULL"]), ok("data_migrations", ["status": "'running'", "completed_at": "NULL"]),
        no("devices", ["device_id": "''"]), no("devices", ["device_id": chars(101)]),
    ]

    @Test(arguments: cases)
    func checkConstraintsMirrorTheDomainRules(_ testCase: Case) async throws {
        let (pool, tenant, habit) = try await SharedSchemaDatabase.shared.get()
        do {
            try await pool.withConnection { connection in
                try await connection.simpleQuery(unsafeSQL: "BEGIN")
                try await SchemaFixture.setContext(connection, tenant: tenant, user: "u1")
                do {
                    try await connection.query(SchemaFixture.insert(testCase.table, tenant: tenant, user: "u1", habit: habit, overrides: testCase.overrides))
                    #expect(testCase.accepted, "accepted, but the rule rejects it")
                } catch let error as PGError {
                    #expect(!testCase.accepted, "rejected: \(error)")
                    if !testCase.accepted {
                        #expect([PGSQLState.checkViolation, .notNullViolation, .foreignKeyViolation].contains(error.sqlState), "\(error)")
                    }
                }
                try await connection.simpleQuery(unsafeSQL: "ROLLBACK")
            }
        }
    }

    @Test func naturalKeysAndTheOneRunningSessionRuleAreUnique() async throws {
        let (pool, tenant, habit) = try await SharedSchemaDatabase.shared.get()
        let pairs: [(String, [String: String])] = [
            ("daily_progress", [:]),
            ("achievements", [:]),
            ("focus_sessions", ["state": "'active'", "end_time": "NULL"]),
        ]
        do {
            for (table, overrides) in pairs {
                await #expect {
                    try await pool.withTransaction { connection in
                        try await SchemaFixture.setContext(connection, tenant: tenant, user: "u1")
                        try await connection.query(SchemaFixture.insert(table, tenant: tenant, user: "u1", habit: habit, overrides: overrides))
                        try await connection.query(SchemaFixture.insert(table, tenant: tenant, user: "u1", habit: habit, overrides: overrides))
                    }
                } throws: { ($0 as? PGError)?.sqlState == .uniqueViolation }
            }
            // A paused session and an active one are both "running": still only one.
            await #expect {
                try await pool.withTransaction { connection in
                    try await SchemaFixture.setContext(connection, tenant: tenant, user: "u1")
                    try await connection.query(SchemaFixture.insert("focus_sessions", tenant: tenant, user: "u1", habit: habit, overrides: ["state": "'paused'", "end_time": "NULL"]))
                    try await connection.query(SchemaFixture.insert("focus_sessions", tenant: tenant, user: "u1", habit: habit, overrides: ["state": "'active'", "end_time": "NULL"]))
                }
            } throws: { ($0 as? PGError)?.sqlState == .uniqueViolation }
        }
    }
}

/// One migrated database with a tenant, user `u1` and a habit, and one small pool on it,
/// shared by the CHECK cases (each runs in its own rolled-back transaction).
actor SharedSchemaDatabase {
    static let shared = SharedSchemaDatabase()
    private var task: Task<(PGPool, UUID, UUID), any Error>?

    func get() async throws -> (PGPool, UUID, UUID) {
        if task == nil {
            task = Task {
                let database = try await TestPostgres.shared.migratedDatabase()
                let pool = database.pool(size: 6)
                let seeded = try await SchemaFixture.seedTenant(pool, name: "checks", users: ["u1"])
                return (pool, seeded.tenant, seeded.habits["u1"]!)
            }
        }
        return try await task!.value
    }
}
