import Foundation
import HabitSyncDomain
import HabitSyncStore
import SeededRandom
import ServerHarness

/// The end-to-end fuzzer: random operations over three devices of two users against a real
/// `habitsync-server` process and a PostgreSQL cluster of the run's own, with the run's
/// invariants checked after every step:
///
/// - the server process is alive;
/// - no response is 5xx, except 503 while the run holds PostgreSQL down;
/// - no batch is answered 503 for its content (outside an outage, no push is 503 at all);
/// - a retried batch gets the first response byte for byte;
/// - no response carries another user's record (every pulled change was written by one of
///   the user's own devices or by the server);
/// - every device that syncs to the end holds exactly what a fresh pull returns.
public struct FuzzRun {
    public struct Options: Sendable {
        public var seed: UInt64
        /// Stop after this many operations…
        public var operations: Int
        /// …or after this long, whichever comes first.
        public var duration: Duration
        /// Stop PostgreSQL for a moment now and then (needs the run's own cluster).
        public var outages: Bool

        public init(seed: UInt64, operations: Int, duration: Duration, outages: Bool) {
            self.seed = seed
            self.operations = operations
            self.duration = duration
            self.outages = outages
        }
    }

    public struct Report: Sendable {
        public var operations = 0
        public var pushes = 0
        public var changesSent = 0
        public var retries = 0
        public var pulls = 0
        public var queries = 0
        public var maintenanceRuns = 0
        public var newDevices = 0
        public var outages = 0
        public var statuses: [Int: Int] = [:]
        public var results: [String: Int] = [:]
        public var violations: [String] = []
        public var seed: UInt64 = 0
        public var elapsed: Duration = .zero

        public var passed: Bool { violations.isEmpty }

        public var text: String {
            var lines = [
                "fuzz run (seed \(seed)): \(operations) operations in \(Int(elapsed / .seconds(1))) s — \(pushes) pushes (\(changesSent) changes, \(retries) retried batches), "
                    + "\(pulls) syncs, \(queries) random queries, \(maintenanceRuns) maintenance runs, \(newDevices) new devices, \(outages) outages"
            ]
            lines.append("  statuses: " + statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " "))
            lines.append("  change results: " + results.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            lines.append(violations.isEmpty ? "  ok   every invariant held after every step" : "  FAIL \(violations.count) violations:")
            lines += violations.prefix(20).map { "    - \($0)" }
            return lines.joined(separator: "\n")
        }
    }

    let serverBinary: URL
    let migrationsDirectory: URL
    let options: Options
    static let shortestUsageRetention: TimeInterval = 20 * 86_400

    public init(serverBinary: URL, migrationsDirectory: URL, options: Options) {
        self.serverBinary = serverBinary
        self.migrationsDirectory = migrationsDirectory
        self.options = options
    }

    public func run() async throws -> Report {
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("habitsync-fuzz-\(getpid())-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let database = try await HarnessDatabase(databaseURL: nil, directory: work, migrationsDirectory: migrationsDirectory, maxConnections: 60)
        let server = ServerProcess(
            // Generous timeouts: a 503 here must mean an outage, never a busy machine. The
            // connection's own connect_timeout (a keyword string: `HarnessDatabase` made the
            // cluster) overrides the server's 5 s: in a full suite run a first connection once
            // took longer, and the run's first push was answered 503.
            binary: serverBinary, databaseURL: database.connectionString + " " + HarnessConnectTimeout.keyword, logDirectory: work, name: "fuzz",
            extraArguments: [
                "--migrate", "off", "--pool-size", "6", "--migrations-dir", migrationsDirectory.standardizedFileURL.path,
                "--statement-timeout", "60s", "--pool-lease-timeout", "60s",
            ])
        var report = Report()
        do {
            try await server.start()
            report = try await drive(server: server, database: database)
        } catch {
            report.violations.append("the run stopped: \(error)")
        }
        if !report.passed { report.violations.append("server log tail:\n\(server.logTail(lines: 30))") }
        await server.stop(grace: .seconds(10))
        await database.close()
        if report.passed { try? FileManager.default.removeItem(at: work) }
        return report
    }

    private func drive(server: ServerProcess, database: HarnessDatabase) async throws -> Report {
        var random = SeededGenerator(seed: options.seed)
        var report = Report()
        report.seed = options.seed
        let clock = ContinuousClock()
        let started = clock.now
        let timeZones = try await TimeZoneCatalog().names(database.pool).names.sorted()
        let corpus = FuzzCorpus(timeZones: timeZones, random: &random)
        let users = ["alice-\(options.seed)", "bob-\(options.seed)"]
        var deviceCount = 0
        func newDevice(_ user: String) async throws -> FuzzDevice {
            deviceCount += 1
            // Above what the server may take to answer (a 60 s pool lease, then a 60 s statement):
            // at 60 s, a run beside four CPU-bound processes stopped on a client timeout
            // (-1001) while the server was still within its own limits.
            return FuzzDevice(user: user, client: DeviceClient(baseURL: server.baseURL, token: try await database.token(user: user), device: "\(user)-d\(deviceCount)", timeout: 300))
        }
        var devices = [try await newDevice(users[0]), try await newDevice(users[0]), try await newDevice(users[1])]
        var writers: [String: Set<String>] = Dictionary(uniqueKeysWithValues: users.map { ($0, [ServerDevice.name]) })
        for device in devices { writers[device.user, default: []].insert(device.name) }
        var lastPush: (device: FuzzDevice, body: Data, reply: Data)?

        func violation(_ text: String) { report.violations.append("op \(report.operations): \(text)") }
        func count(_ reply: HTTPReply, during outage: Bool = false) {
            report.statuses[reply.status, default: 0] += 1
            if reply.status >= 500 && !(outage && reply.status == 503) {
                violation("\(reply.status) \(String(reply.text.prefix(200)))")
            }
        }
        func checkOwnership(_ replies: [HTTPReply], user: String) {
            for reply in replies where reply.status == 200 {
                guard let json = try? reply.json(), let changes = json["changes"] as? [[String: Any]] else { continue }
                for change in changes {
                    let writer = change["updatedBy"] as? String ?? "?"
                    if !(writers[user]?.contains(writer) ?? false) {
                        violation("\(user) pulled \(FuzzDevice.key(change)) written by \(writer), not one of their devices")
                    }
                }
            }
        }
        func converge(_ device: FuzzDevice) async throws {
            // A fresh pull, then the device catches up: both from the same database state.
            let fresh = FuzzDevice(user: device.user, client: device.client)
            let freshReplies = try await fresh.sync(limit: 5000)
            freshReplies.forEach { count($0) }
            let replies = try await device.sync(limit: 1 + Int(random.next() % 300))
            replies.forEach { count($0) }
            checkOwnership(freshReplies + replies, user: device.user)
            guard freshReplies.allSatisfy({ $0.status == 200 }), replies.last?.status == 200 else { return }
            // Usage events of months past the retention leave the sync when maintenance archives
            // them (docs/protocol.md): devices keep theirs, a fresh pull no longer has them.
            let archivable = Date().addingTimeInterval(-Self.shortestUsageRetention + 86_400)
            func synced(_ state: [String: [String: Any]]) -> [String: [String: Any]] {
                state.filter { _, change in
                    guard change["collection"] as? String == "usageEvents", let record = change["record"] as? [String: Any],
                        let text = record["timestamp"] as? String, let time = WireTime.parse(text)
                    else { return true }
                    return time > archivable
                }
            }
            let expected = synced(fresh.state), held = synced(device.state)
            if Set(expected.keys) != Set(held.keys) {
                let missing = Set(expected.keys).subtracting(held.keys).sorted().prefix(3), extra = Set(held.keys).subtracting(expected.keys).sorted().prefix(3)
                violation("\(device.name) diverged: missing \(Array(missing)), extra \(Array(extra))")
                return
            }
            for (key, change) in expected where !NSDictionary(dictionary: change).isEqual(to: held[key] ?? [:]) {
                violation("\(device.name) holds another state of \(key) than a fresh pull returns")
                return
            }
        }

        while report.operations < options.operations, clock.now - started < options.duration, report.violations.isEmpty {
            report.operations += 1
            let roll = random.next() % 100
            let device = devices[Int(random.next() % UInt64(devices.count))]
            let generator = ChangeGenerator(corpus: corpus, now: Date())
            switch roll {
            case 0..<50:
                let (body, wellFormed) = generator.body(&random)
                let reply = try await device.client.push(body)
                report.pushes += 1
                count(reply)
                if wellFormed, reply.status == 200 {
                    let sent = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["changes"] as? [Any] ?? []
                    report.changesSent += sent.count
                    let results = (try? reply.json())?["results"] as? [[String: Any]] ?? []
                    if results.count != sent.count { violation("\(sent.count) changes, \(results.count) results") }
                    for result in results { report.results[result["status"] as? String ?? "?", default: 0] += 1 }
                    lastPush = (device, body, reply.body)
                } else if wellFormed, ![400, 413].contains(reply.status) {
                    violation("a well-formed batch was answered \(reply.status): \(String(reply.text.prefix(200)))")
                }
            case 50..<56:
                // The last accepted batch again: the first response, byte for byte.
                guard let (pusher, body, first) = lastPush else { continue }
                let reply = try await pusher.client.push(body)
                report.retries += 1
                count(reply)
                if reply.body != first { violation("a retried batch got another response (\(reply.status))") }
            case 56..<72:
                let replies = try await device.sync(limit: [1, 2, 7, 500, 5000][Int(random.next() % 5)])
                report.pulls += 1
                replies.forEach { count($0) }
                checkOwnership(replies, user: device.user)
            case 72..<88:
                let path = ["/v1/sync/pull", "/v1/stats/habits", "/v1/stats/focus", "/v1/stats/usage", "/livez", "/healthz", "/readyz", "/openapi.yaml", "/metrics"][Int(random.next() % 9)]
                let reply = try await device.client.get(path + generator.query(&random))
                report.queries += 1
                count(reply)
                if path == "/v1/sync/pull" { checkOwnership([reply], user: device.user) }
            case 88..<93:
                let retention = MaintenanceStore.Retention(
                    tombstones: [0.001, 5, 3600][Int(random.next() % 3)], pushBatches: [0.001, 86_400][Int(random.next() % 2)],
                    conflicts: 0.001, usageEvents: [Self.shortestUsageRetention, 90 * 86_400][Int(random.next() % 2)])
                _ = try await MaintenanceStore(pool: database.pool).run(retention: retention, now: Date().addingTimeInterval(1))
                report.maintenanceRuns += 1
                // Idempotency records live as long as the batch retention: once purged, a retry
                // is a new batch (docs/protocol.md), so it is no longer checked byte for byte.
                if retention.pushBatches < 86_400 { lastPush = nil }
            case 93..<97:
                let index = Int(random.next() % UInt64(devices.count))
                let replacement = try await newDevice(devices[index].user)
                writers[replacement.user, default: []].insert(replacement.name)
                devices[index] = replacement
                report.newDevices += 1
            default:
                guard options.outages, database.ownsCluster else { continue }
                try await database.stopCluster()
                let (body, _) = generator.body(&random)
                let reply = try await device.client.push(body)
                count(reply, during: true)
                if reply.status != 503 && reply.status < 500 && ![400, 413].contains(reply.status) { violation("a push during the outage was answered \(reply.status)") }
                try await database.startCluster()
                for _ in 0..<600 {
                    if (try? await device.client.get("/readyz"))?.status == 200 { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                report.outages += 1
            }
            if !server.isRunning {
                violation("the server process died")
                break
            }
            for device in devices { try await converge(device) }
        }
        report.elapsed = clock.now - started
        return report
    }
}
