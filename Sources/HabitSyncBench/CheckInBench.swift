import Foundation
import HabitSyncDomain
import LibPQClient
import Logging
import ServerHarness

#if canImport(Glibc)
    import Glibc
#endif

/// What phones send most (issue 46): on app open, one completion (`increment: 1` on today's
/// progress of a habit) and two usage events, as one protocol-2 push. Measured end to end at
/// `connections` keep-alive connections over `users` users, beside the same rows written by the
/// leanest transaction PostgreSQL allows, on the same cluster in the same run; each with the CPU
/// it cost the server process and PostgreSQL (`ProcessCPU`), per check-in.
enum CheckInBench {
    struct Result: Codable {
        /// Each check-in the day's first completion (it reaches the goal: the streak moves and
        /// the derived records are recomputed), not another completion of a complete day.
        let firstOfDay: Bool
        let connections: Int
        let users: Int
        let checkIns: Int
        let perSecond: Double
        let latencyMilliseconds: Percentiles
        /// CPU milliseconds per check-in.
        let serverCPU: Double
        let postgresCPU: Double
        let rawPerSecond: Double
        let rawPostgresCPU: Double

        var cpu: Double { serverCPU + postgresCPU }

        /// The median round of `samples` by CPU per check-in (the upper one of an even count).
        static func median(_ samples: [Result]) -> Result? { samples.sorted { $0.cpu < $1.cpu }.dropFirst(samples.count / 2).first }

        /// The header of a table of configurations measured in rounds (`medianRow`).
        static let roundsHeader = ["| check-in | per second | p50 / p99 ms | server ms | PostgreSQL ms | CPU ms: median (rounds) |", "|---|---|---|---|---|---|"]

        /// One configuration's row: its median round, and every round's CPU per check-in.
        static func medianRow(_ name: String, _ samples: [Result]) -> String? {
            guard let m = median(samples) else { return nil }
            func ms(_ value: Double) -> String { String(format: "%.2f", value) }
            let rounds = samples.map { ms($0.cpu) }.joined(separator: ", ")
            return
                "| \(name) | \(String(format: "%.0f", m.perSecond)) | \(String(format: "%.1f", m.latencyMilliseconds.p50)) / \(String(format: "%.1f", m.latencyMilliseconds.p99)) | \(ms(m.serverCPU)) | \(ms(m.postgresCPU)) | \(ms(m.cpu)) (\(rounds)) |"
        }
        var ratio: Double { perSecond / max(rawPerSecond, 1) }
    }

    /// `increment`: nil sets the day's count to `count` (the first-of-day warm-up makes the
    /// day at 0, as an app does when it shows the day's habits).
    static func body(habit: UUID, day: UUID, date: String, count: Int, increment: Int? = 1, now: Date) -> Data {
        let at = WireTime.format(now)
        var progress: [String: Any] = [
            "collection": "dailyProgress", "op": "upsert", "id": day.uuidString, "updatedAt": at,
            "record": ["habitId": habit.uuidString, "date": date, "progressCount": count, "goalCount": 1],
        ]
        if let increment { progress["increment"] = increment }
        let changes: [[String: Any]] = [
            progress,
            [
                "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": at,
                "record": ["eventType": "deepen_pause", "timestamp": at, "pauseDuration": 5, "timerDuration": 30],
            ],
            [
                "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": at,
                "record": ["eventType": "proceed_to_app", "timestamp": at, "targetAppName": "Mail", "pauseDuration": 0, "timerDuration": 30],
            ],
        ]
        // Encoded once here; `JSONSerialization` of a fixed shape cannot fail.
        return (try? JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "protocolVersion": 2, "changes": changes])) ?? Data()
    }

    /// `firstOfDay`: every check-in is a user's first completion of the day (a user each,
    /// `users` ignored), whose day a warm-up made at 0. `rawCeiling`: false leaves the raw
    /// figures 0 (a price row, compared with a run that measured them).
    static func measure(
        _ environment: BenchEnvironment, connections: Int, users requestedUsers: Int, checkInsPerConnection: Int, firstOfDay: Bool = false,
        rawCeiling: Bool = true, on replica: ServerProcess? = nil, log: (String) -> Void
    ) async throws -> Result {
        // The environment's server, or another replica on its database (a traced one).
        let target = replica ?? environment.server
        let users = firstOfDay ? connections * checkInsPerConnection : requestedUsers
        // Every user has one daily habit; its day of today is made by the first check-in.
        log("check-in: \(users) users, each with a habit…")
        var people: [(token: String, habit: UUID, day: UUID)] = []
        for index in 0..<users {
            let user = "check-in-\(index)-\(UUID().uuidString.prefix(6))"
            let habit = UUID()
            let client = try await environment.client(user: user, device: "phone")
            let status = try await client.push(Workloads.habitBatch([habit])).status
            guard status == 200 else { throw BenchError("setup push answered \(status)") }
            people.append((try await environment.database.token(user: user), habit, UUID()))
        }
        let today = LocalDate(Date(), in: TimeZone.gmt).description
        // Bodies are encoded before the clock starts: the phones' work, not the server's.
        let now = Date()
        var work: [[(headers: [String: String], body: Data)]] = Array(repeating: [], count: connections)
        for round in 0..<checkInsPerConnection {
            for connection in 0..<connections {
                let person = people[(round * connections + connection) % users]
                let headers = ["Authorization": "Bearer \(person.token)", "X-Device-Id": "phone", "Content-Type": "application/json"]
                let count = firstOfDay ? 1 : round + 1
                work[connection].append((headers, body(habit: person.habit, day: person.day, date: today, count: count, now: now.addingTimeInterval(Double(round) / 1000))))
            }
        }
        // One warm-up check-in per user (the day exists from then on, as it does after the
        // day's first completion).
        let port = target.port
        let everyone = people
        try await onOwnThread {
            let connection = try PlainHTTPConnection(port: port)
            for person in everyone {
                let headers = ["Authorization": "Bearer \(person.token)", "X-Device-Id": "phone", "Content-Type": "application/json"]
                let warmUp =
                    firstOfDay
                    ? body(habit: person.habit, day: person.day, date: today, count: 0, increment: nil, now: now)
                    : body(habit: person.habit, day: person.day, date: today, count: 1, now: now)
                _ = try connection.pushUntilStored(headers: headers, body: warmUp, what: "warm-up check-in")
            }
        }

        log("check-in: \(connections) connections × \(checkInsPerConnection)…")
        try await forgetStatementStatistics(environment.database.pool)
        let postgres = try await ProcessCPU.postgres(environment.database.pool)
        let server = ProcessCPU(pid: target.processIdentifier, withChildren: false)
        let (serverBefore, postgresBefore) = (server.milliseconds(), postgres.milliseconds())
        let clock = ContinuousClock()
        let started = clock.now
        let requestsByConnection = work
        let (latencies, retried) = try await withThrowingTaskGroup(of: ([Double], Int).self) { group in
            for requests in requestsByConnection {
                group.addTask {
                    try await onOwnThread {
                        let connection = try PlainHTTPConnection(port: port)
                        var samples: [Double] = []
                        var retried = 0
                        samples.reserveCapacity(requests.count)
                        for request in requests {
                            let sent = clock.now
                            retried += try connection.pushUntilStored(headers: request.headers, body: request.body, what: "check-in")
                            samples.append((clock.now - sent) / .milliseconds(1))
                        }
                        return (samples, retried)
                    }
                }
            }
            return try await group.reduce(into: ([Double](), 0)) {
                $0.0 += $1.0; $0.1 += $1.1
            }
        }
        if retried > 0 { log("check-in: \(retried) answers were 503 and retried (a busy machine); their CPU is in the figures") }
        let wall = (clock.now - started) / .seconds(1)
        let checkIns = connections * checkInsPerConnection
        let serverCPU = (server.milliseconds() - serverBefore) / Double(checkIns)
        let postgresCPU = (postgres.milliseconds() - postgresBefore) / Double(checkIns)

        guard rawCeiling else {
            return Result(
                firstOfDay: firstOfDay, connections: connections, users: users, checkIns: checkIns, perSecond: Double(checkIns) / wall,
                latencyMilliseconds: Percentiles(latencies), serverCPU: serverCPU, postgresCPU: postgresCPU, rawPerSecond: 0, rawPostgresCPU: 0)
        }
        log("check-in: the raw ceiling…")
        let (rawPerSecond, rawCPU) = try await raw(environment.database.pool, postgres: postgres, connections: connections, users: users, checkInsPerConnection: checkInsPerConnection)
        return Result(
            firstOfDay: firstOfDay, connections: connections, users: users, checkIns: checkIns, perSecond: Double(checkIns) / wall, latencyMilliseconds: Percentiles(latencies),
            serverCPU: serverCPU, postgresCPU: postgresCPU, rawPerSecond: rawPerSecond, rawPostgresCPU: rawCPU)
    }

    /// The row of the main table.
    static func row(_ r: Result) -> String {
        func ms(_ value: Double) -> String { String(format: "%.2f", value) }
        func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
        let what = "check-in (\(r.firstOfDay ? "the day's first completion" : "1 completion") + 2 usage events)"
        let latency = "p50/p99 \(fixed(r.latencyMilliseconds.p50, 1))/\(fixed(r.latencyMilliseconds.p99, 1)) ms"
        let cpu = "server \(ms(r.serverCPU)) + PostgreSQL \(ms(r.postgresCPU)) = \(ms(r.cpu)) ms, raw \(ms(r.rawPostgresCPU)) ms\(cpuRatio(r))"
        let measurement = "\(what), \(r.connections) connections, \(r.users) users, per second (\(latency); CPU per check-in: \(cpu))"
        let target = "≥ 0.3, CPU ≤ \(r.firstOfDay ? 7 : 5)× raw (issue 63)"
        return "| \(measurement) | \(fixed(r.perSecond, 0)) | \(fixed(r.rawPerSecond, 0)) | \(fixed(r.ratio, 3)) | \(target) |"
    }

    /// The check-in's CPU (server and PostgreSQL) over the raw transaction's, measured in the
    /// same run: what issue 63's target bounds. Empty when the run measured no raw ceiling.
    static func cpuRatio(_ r: Result) -> String {
        guard r.rawPostgresCPU > 0 else { return "" }
        return String(format: ", %.1f× raw", r.cpu / r.rawPostgresCPU)
    }

    /// The check-in's own table (`--check-in`).
    static func table(_ r: Result) -> String {
        ["| measurement | end to end | raw ceiling | ratio | target |", "|---|---|---|---|---|", row(r)].joined(separator: "\n")
    }

    // MARK: - The raw ceiling

    static let createRaw: [String] = [
        "CREATE TABLE IF NOT EXISTS bench_checkin_users (user_id text PRIMARY KEY, counter bigint NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS bench_checkin_days (user_id text, id uuid, habit_id uuid, date date, progress_count int,
            updated_at timestamptz(3), updated_by text, server_version bigint, PRIMARY KEY (user_id, id))
        """,
        """
        CREATE TABLE IF NOT EXISTS bench_checkin_events (user_id text, id uuid, event_type text, occurred_at timestamptz(3),
            server_version bigint, PRIMARY KEY (user_id, id))
        """,
    ]

    /// The same rows in one transaction, one round trip: the user's counter moved by three
    /// (the lock), the day upserted with +1, the two events inserted, each with its version.
    static func rawCheckIn(user: String, day: UUID, habit: UUID, date: String, events: [UUID], now: Date) -> [PGQuery] {
        [
            "BEGIN",
            "UPDATE bench_checkin_users SET counter = counter + 3 WHERE user_id = \(user)",
            """
            INSERT INTO bench_checkin_days AS d (user_id, id, habit_id, date, progress_count, updated_at, updated_by, server_version)
            SELECT \(user), \(day), \(habit), \(date)::date, 1, \(now), 'phone', counter - 2 FROM bench_checkin_users WHERE user_id = \(user)
            ON CONFLICT (user_id, id) DO UPDATE SET progress_count = d.progress_count + 1, updated_at = EXCLUDED.updated_at,
                server_version = EXCLUDED.server_version
            """,
            """
            INSERT INTO bench_checkin_events (user_id, id, event_type, occurred_at, server_version)
            SELECT \(user), e.id, 'deepen_pause', \(now), u.counter - 2 + e.n FROM unnest(\(events)::uuid[]) WITH ORDINALITY AS e(id, n)
            CROSS JOIN bench_checkin_users u WHERE u.user_id = \(user)
            """,
            "COMMIT",
        ]
    }

    static func raw(_ pool: PGPool, postgres: ProcessCPU, connections: Int, users: Int, checkInsPerConnection: Int) async throws -> (perSecond: Double, cpu: Double) {
        try await pool.withConnection { connection in
            for statement in createRaw { try await connection.simpleQuery(unsafeSQL: statement) }
            try await connection.simpleQuery(unsafeSQL: "INSERT INTO bench_checkin_users SELECT 'raw-' || g, 0 FROM generate_series(0, \(users - 1)) g ON CONFLICT DO NOTHING")
        }
        let habits = (0..<users).map { _ in UUID() }, days = (0..<users).map { _ in UUID() }
        let date = LocalDate(Date(), in: TimeZone.gmt).description
        let before = postgres.milliseconds()
        let clock = ContinuousClock()
        let started = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<connections {
                group.addTask {
                    try await pool.withConnection { connection in
                        for round in 0..<checkInsPerConnection {
                            let index = (round * connections + worker) % users
                            _ = try await connection.pipeline(
                                rawCheckIn(user: "raw-\(index)", day: days[index], habit: habits[index], date: date, events: [UUID(), UUID()], now: Date()))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let wall = (clock.now - started) / .seconds(1)
        let checkIns = Double(connections * checkInsPerConnection)
        return (checkIns / wall, (postgres.milliseconds() - before) / checkIns)
    }

    /// Where the database keeps `pg_stat_statements`: it then holds the measured check-ins
    /// only (not the setup pushes and warm-ups), until the raw ceiling's statements join them.
    static func forgetStatementStatistics(_ pool: PGPool) async throws {
        try await pool.withConnection { connection in
            let installed = try await connection.query("SELECT count(*) AS n FROM pg_extension WHERE extname = 'pg_stat_statements'").single()
            if try installed.decode("n", as: Int.self) > 0 { _ = try await connection.query("SELECT pg_stat_statements_reset()") }
        }
    }
}

/// CPU time a process has used, from `/proc`: user and system time of the process (every
/// thread); with `withChildren`, also of its exited children (fields 16–17) and its live ones.
/// For PostgreSQL, the postmaster with its backends: a backend that exits during a run lands in
/// the postmaster's children's times, so nothing is lost. On a Citus cluster, every node's
/// postmaster (all on this machine): the sum is what the cluster spent.
struct ProcessCPU: Sendable {
    let pids: [Int32]
    let withChildren: Bool

    init(pid: Int32, withChildren: Bool) {
        pids = [pid]
        self.withChildren = withChildren
    }

    init(pids: [Int32], withChildren: Bool) {
        self.pids = pids
        self.withChildren = withChildren
    }

    /// The postmaster of `pool`'s server (the parent of one of its backends), and on a Citus
    /// coordinator the postmaster of every active node besides.
    static func postgres(_ pool: PGPool) async throws -> ProcessCPU {
        var configurations = [pool.configuration.connection]
        let nodes: [PGNodeAddress] = try await pool.withConnection { connection in
            guard try await connection.query("SELECT to_regclass('pg_catalog.pg_dist_node') IS NOT NULL AS citus").single().decode("citus", as: Bool.self) else { return [] }
            return try await connection.query("SELECT nodename, nodeport FROM pg_dist_node WHERE isactive AND groupid <> 0 ORDER BY nodeport").rows.map {
                PGNodeAddress(host: try $0.decode("nodename"), port: try $0.decode("nodeport"))
            }
        }
        configurations += nodes.map { pool.configuration.connection.at($0) }
        var postmasters: [Int32] = []
        for configuration in configurations {
            // Read while the backend lives: its parent is the node's postmaster.
            let parent = try await PGPool.withPool(.init(connection: configuration, maximumConnections: 1), logger: Logger(label: "habitsync-bench")) { node in
                try await node.withConnection { connection in
                    let backend = try await connection.query("SELECT pg_backend_pid() AS pid").single().decode("pid", as: Int32.self)
                    guard let fields = stat(backend), fields.count > 1, let parent = Int32(fields[1]) else {
                        throw BenchError("PostgreSQL runs elsewhere (no /proc/\(backend)): its CPU cannot be read")
                    }
                    return parent
                }
            }
            if !postmasters.contains(parent) { postmasters.append(parent) }
        }
        return ProcessCPU(pids: postmasters, withChildren: true)
    }

    /// The fields of `/proc/<pid>/stat` after the command name (index 0 = field 3, state).
    static func stat(_ pid: Int32) -> [String]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ").map(String.init)
    }

    /// Fields 14–15 (and 16–17 for the children that exited), in milliseconds.
    func milliseconds() -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        func times(_ fields: [String], children: Bool) -> Double {
            let wanted = children ? [11, 12, 13, 14] : [11, 12]
            return wanted.reduce(0) { $0 + (fields.count > $1 ? Double(fields[$1]) ?? 0 : 0) }
        }
        var total = 0.0
        for pid in pids {
            guard let own = Self.stat(pid) else { continue }
            total += times(own, children: withChildren)
            if withChildren, let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") {
                for entry in entries {
                    guard let child = Int32(entry), let fields = Self.stat(child), fields.count > 1, fields[1] == String(pid) else { continue }
                    total += times(fields, children: false)
                }
            }
        }
        return total / ticks * 1000
    }
}
