import Foundation
import HabitSyncDomain
import LibPQClient
import ServerHarness

/// The measured workloads. Every figure is taken in the same run, on the same database.
enum Workloads {
    // MARK: - Raw ceiling through our libpq client

    static let createRawTable: PGQuery = """
        CREATE TABLE IF NOT EXISTS bench_raw_progress (
            user_id text, id uuid, habit_id uuid, date date, progress_count int, goal_count int,
            updated_at timestamptz(3), updated_by text, server_version bigint, PRIMARY KEY (user_id, id));
        """
    static let createRawIndex: PGQuery = "CREATE INDEX IF NOT EXISTS bench_raw_pull ON bench_raw_progress (user_id, server_version)"

    /// The best statement shape for a batch: one upsert of all rows, LWW in the WHERE.
    static func rawUpsert(
        user: String, ids: [String], habits: [String], dates: [String], counts: [Int32], goals: [Int32],
        updatedAt: [Date], updatedBy: [String], versions: [Int64]
    ) -> PGQuery {
        """
        INSERT INTO bench_raw_progress AS b (user_id, id, habit_id, date, progress_count, goal_count, updated_at, updated_by, server_version)
        SELECT \(user), * FROM unnest(\(ids)::uuid[], \(habits)::uuid[], \(dates)::date[], \(counts)::int4[], \(goals)::int4[],
                                      \(updatedAt)::timestamptz[], \(updatedBy)::text[], \(versions)::int8[])
        ON CONFLICT (user_id, id) DO UPDATE SET progress_count = EXCLUDED.progress_count, goal_count = EXCLUDED.goal_count,
            updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by, server_version = EXCLUDED.server_version
        WHERE (b.updated_at, b.updated_by COLLATE "C") < (EXCLUDED.updated_at, EXCLUDED.updated_by COLLATE "C")
        """
    }

    /// Rows per second for `workers` connections each upserting `batches` batches of `size`.
    static func rawUpsert(_ pool: PGPool, workers: Int, batches: Int, size: Int) async throws -> Double {
        _ = try await pool.withConnection { try await $0.query(createRawTable) }
        _ = try await pool.withConnection { try await $0.query(createRawIndex) }
        let clock = ContinuousClock()
        let started = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    let user = "raw-\(workers)-\(worker)-\(UUID().uuidString.prefix(6))"
                    let habit = UUID()
                    for batch in 0..<batches {
                        let ids = (0..<size).map { _ in UUID().uuidString.lowercased() }
                        let dates = (0..<size).map { LocalDate(dayNumber: 20_000 + batch * size + $0).description }
                        let upsert = rawUpsert(
                            user: user, ids: ids, habits: Array(repeating: habit.uuidString.lowercased(), count: size), dates: dates,
                            counts: (0..<size).map { Int32($0 % 5) }, goals: Array(repeating: Int32(3), count: size),
                            updatedAt: Array(repeating: Date(), count: size), updatedBy: Array(repeating: "raw", count: size),
                            versions: (0..<size).map { Int64(batch * size + $0 + 1) })
                        _ = try await pool.withConnection { try await $0.query(upsert) }
                    }
                }
            }
            try await group.waitForAll()
        }
        return Double(workers * batches * size) / ((clock.now - started) / .seconds(1))
    }

    static func rawPullPage(tenant: UUID, user: String, after cursor: Int64) -> PGQuery {
        """
        SELECT id, event_type, occurred_at, target_app_name, pause_duration, timer_duration, server_version, updated_at, updated_by
        FROM usage_events WHERE tenant_id = \(tenant) AND user_id = \(user) AND server_version > \(cursor) ORDER BY server_version LIMIT 1000
        """
    }

    /// Rows per second reading a user's rows in indexed 1000-row pages, decoded into Swift values.
    static func rawPull(_ pool: PGPool, tenant: UUID, user: String) async throws -> Double {
        let clock = ContinuousClock()
        let started = clock.now
        var cursor: Int64 = 0
        var total = 0
        while true {
            let rows = try await pool.withConnection {
                try await $0.query(rawPullPage(tenant: tenant, user: user, after: cursor)).rows
            }
            if rows.isEmpty { break }
            for row in rows {
                _ = try row.decode("id", as: UUID.self)
                _ = try row.decode("event_type", as: String.self)
                _ = try row.decode("occurred_at", as: Date.self)
                _ = try row.decode("pause_duration", as: Double.self)
                _ = try row.decode("timer_duration", as: Double.self)
                _ = try row.decode("updated_at", as: Date.self)
                cursor = try row.decode("server_version", as: Int64.self)
            }
            total += rows.count
        }
        return Double(total) / ((clock.now - started) / .seconds(1))
    }

    // MARK: - Seeding stored rows directly

    /// `count` usage events for `user`, versions 1…count (as the schema owner).
    static func seedUsageEvents(_ pool: PGPool, tenant: UUID, user: String, count: Int) async throws {
        try await pool.withTransaction { connection in
            try await connection.query("SELECT set_config('habitsync.tenant_id', \(tenant.uuidString.lowercased()), true), set_config('habitsync.user_id', \(user), true)")
            try await connection.query("INSERT INTO users (tenant_id, user_id, change_counter) VALUES (\(tenant), \(user), \(count)) ON CONFLICT DO NOTHING")
            try await connection.query(
                """
                INSERT INTO usage_events (tenant_id, user_id, id, event_type, occurred_at, pause_duration, timer_duration, updated_at, updated_by, server_version)
                SELECT \(tenant), \(user), gen_random_uuid(), (ARRAY['exit_to_focus','deepen_pause'])[1 + g % 2],
                       now() - make_interval(mins => (g % 500000)::int), g % 30, 30, now(), 'seed', g
                FROM generate_series(1, \(count)) g
                """)
        }
        _ = try await pool.withConnection { try await $0.simpleQuery(unsafeSQL: "ANALYZE usage_events; ANALYZE users") }
    }

    // MARK: - Through the server

    /// A batch of 100 mixed changes for a device's user: progress, usage events, habit edits.
    static func mixedBatch(habits: [UUID], round: Int) -> Data {
        var changes: [[String: Any]] = []
        let at = WireTime.format(Date(timeIntervalSince1970: 1_795_000_000 + Double(round)))
        for n in 0..<40 {
            changes.append([
                "collection": "dailyProgress", "op": "upsert", "id": UUID().uuidString, "updatedAt": at,
                "record": [
                    "habitId": habits[n % habits.count].uuidString, "date": LocalDate(dayNumber: 19_000 + round * 2 + n / habits.count).description,
                    "progressCount": n % 4, "goalCount": 3,
                ],
            ])
        }
        for n in 0..<40 {
            changes.append([
                "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": at,
                "record": ["eventType": "exit_to_focus", "timestamp": at, "pauseDuration": n % 30, "timerDuration": 30],
            ])
        }
        for n in 0..<20 {
            changes.append([
                "collection": "habits", "op": "upsert", "id": habits[n % habits.count].uuidString, "updatedAt": at,
                "record": [
                    "name": "Habit \(n) round \(round)", "habitType": "formation", "goalCount": 3, "goalUnit": "times",
                    "schedule": ["type": "daily"], "startDate": "2020-01-01",
                ],
            ])
        }
        return try! JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])
    }

    static func habitBatch(_ habits: [UUID]) -> Data {
        let changes: [[String: Any]] = habits.map {
            [
                "collection": "habits", "op": "upsert", "id": $0.uuidString, "updatedAt": "2026-01-01T00:00:00.000Z",
                "record": ["name": "Habit", "habitType": "formation", "goalCount": 3, "goalUnit": "times", "schedule": ["type": "daily"], "startDate": "2020-01-01"],
            ]
        }
        return try! JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])
    }

    struct PushResult: Codable {
        let devices: Int
        let recordsPerSecond: Double
        let latencyMilliseconds: Percentiles
        /// CPU per 100-change push: the server's, and PostgreSQL's (every node's on Citus).
        var serverCPUPerPush: Double?
        var postgresCPUPerPush: Double?
    }

    /// `devices` devices, each its own user, each pushing `batches` batches of 100 changes over
    /// a keep-alive connection of its own (`PlainHTTPConnection`, on a thread of its own).
    static func push(_ environment: BenchEnvironment, devices: Int, batches: Int) async throws -> PushResult {
        var pushers: [(token: String, device: String, habits: [UUID])] = []
        for device in 0..<devices {
            let user = "push-\(devices)-\(device)-\(UUID().uuidString.prefix(6))"
            let client = try await environment.client(user: user, device: "bench-\(device)")
            let habits = (0..<20).map { _ in UUID() }
            let status = try await client.push(habitBatch(habits)).status
            guard status == 200 else { throw BenchError("setup push answered \(status)") }
            pushers.append((try await environment.database.token(user: user), "bench-\(device)", habits))
        }
        // Every body is encoded before the clock starts: the devices' JSON encoding is their
        // CPU's work, and here it would compete with the server for the same cores.
        let bodies = pushers.map { pusher in (0..<batches).map { mixedBatch(habits: pusher.habits, round: $0) } }
        let port = environment.server.port
        let postgres = try await ProcessCPU.postgres(environment.database.pool)
        let server = ProcessCPU(pid: environment.server.processIdentifier, withChildren: false)
        let (serverBefore, postgresBefore) = (server.milliseconds(), postgres.milliseconds())
        let clock = ContinuousClock()
        let started = clock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for (pusher, bodies) in zip(pushers, bodies) {
                let headers = ["Authorization": "Bearer \(pusher.token)", "X-Device-Id": pusher.device, "Content-Type": "application/json"]
                group.addTask {
                    try await onOwnThread {
                        let connection = try PlainHTTPConnection(port: port)
                        var samples: [Double] = []
                        for body in bodies {
                            let sent = clock.now
                            _ = try connection.pushUntilStored(headers: headers, body: body, what: "push")
                            samples.append((clock.now - sent) / .milliseconds(1))
                        }
                        return samples
                    }
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }
        let wall = (clock.now - started) / .seconds(1)
        let pushes = Double(devices * batches)
        return PushResult(
            devices: devices, recordsPerSecond: pushes * 100 / wall, latencyMilliseconds: Percentiles(latencies),
            serverCPUPerPush: (server.milliseconds() - serverBefore) / pushes, postgresCPUPerPush: (postgres.milliseconds() - postgresBefore) / pushes)
    }

    /// Records per second of a full initial sync through the API (pages of 5000).
    static func initialSync(_ puller: Puller) throws -> (records: Int, recordsPerSecond: Double) {
        let clock = ContinuousClock()
        let started = clock.now
        var cursor: String?
        var total = 0
        while true {
            let page = try puller.page(cursor: cursor, limit: 5000)
            total += page.changes
            cursor = page.cursor
            if !page.hasMore { break }
        }
        return (total, Double(total) / ((clock.now - started) / .seconds(1)))
    }

    /// A device that pushes 100 usage events, then times the pull of them from its cursor.
    struct IncrementalPuller {
        let client: DeviceClient
        let puller: Puller
        var cursor: String?
        var round = 0

        init(_ client: DeviceClient, _ puller: Puller, from cursor: String?) {
            self.client = client
            self.puller = puller
            self.cursor = cursor
        }

        /// One round; returns the pull's latency in milliseconds.
        mutating func measureOnce() async throws -> Double {
            let changes: [[String: Any]] = (0..<100).map { n in
                [
                    "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": "2026-11-20T08:00:00.000Z",
                    "record": ["eventType": "deepen_pause", "timestamp": WireTime.format(Date().addingTimeInterval(-Double(round * 100 + n))), "pauseDuration": 5, "timerDuration": 30],
                ]
            }
            round += 1
            let status = try await client.push(try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])).status
            guard status == 200 else { throw BenchError("push answered \(status)") }
            let clock = ContinuousClock()
            let started = clock.now
            let page = try puller.page(cursor: cursor, limit: 500)
            let elapsed = (clock.now - started) / .milliseconds(1)
            guard page.changes >= 100 else { throw BenchError("an incremental pull returned \(page.changes) changes, expected at least 100") }
            cursor = page.cursor
            return elapsed
        }
    }

    /// Latency percentiles of `rounds` incremental pulls.
    static func incrementalPull(_ device: inout IncrementalPuller, rounds: Int) async throws -> Percentiles {
        var samples: [Double] = []
        for _ in 0..<rounds { samples.append(try await device.measureOnce()) }
        return Percentiles(samples)
    }

    /// The same for two users, round by round in turn, so that the machine's noise falls on
    /// both alike.
    static func incrementalPullSideBySide(_ first: inout IncrementalPuller, _ second: inout IncrementalPuller, rounds: Int) async throws -> (Percentiles, Percentiles) {
        var (a, b): ([Double], [Double]) = ([], [])
        for _ in 0..<rounds {
            a.append(try await first.measureOnce())
            b.append(try await second.measureOnce())
        }
        return (Percentiles(a), Percentiles(b))
    }
}
