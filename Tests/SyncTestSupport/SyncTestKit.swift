import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import Testing
import TestSupport

typealias JSON = [String: Any]

/// A migrated database with one tenant, and the real server over it.
struct SyncWorld {
    let database: TestDatabase
    let tenant: UUID
    let key: TenantKey

    static func make(name: String = "acme") async throws -> SyncWorld {
        try await make(on: try await TestPostgres.shared.migratedDatabase(), name: name)
    }

    /// One tenant on a database the caller made (an undistributed one, on Citus).
    static func make(on database: TestDatabase, name: String = "acme") async throws -> SyncWorld {
        let key = TenantKey.generatedSecret()
        let tenant = try await database.withPool(size: 1) { try await TenantStore(pool: $0).create(name: name, key: key) }
        return SyncWorld(database: database, tenant: tenant.id, key: key)
    }

    func addTenant(_ name: String) async throws -> (UUID, TenantKey) {
        let key = TenantKey.generatedSecret()
        let tenant = try await database.withPool(size: 1) { try await TenantStore(pool: $0).create(name: name, key: key) }
        return (tenant.id, key)
    }

    func token(user: String, tenant: UUID? = nil, key: TenantKey? = nil) async throws -> String {
        try await TokenMinter.mint(tenantID: tenant ?? self.tenant, userID: user, key: key ?? self.key, ttl: 3600)
    }

    func client(_ server: RunningServer, user: String, device: String = "iphone-A") async throws -> SyncClient {
        SyncClient(baseURL: server.baseURL, token: try await token(user: user), device: device)
    }

    /// Runs `body` with the server up.
    func serve<T: Sendable>(_ configuration: ServerConfiguration = .forTests, poolSize: Int = 4, _ body: (RunningServer) async throws -> T) async throws -> T {
        try await RunningServer.with(database: database, configuration: configuration, poolSize: poolSize, body)
    }

    /// Runs `body` while a transaction of the test holds `user`'s row lock (the lock every push
    /// of that user takes first), so the user's pushes wait in PostgreSQL until `body` ends.
    func holdingUserLock<T: Sendable>(_ user: String, _ body: () async throws -> T) async throws -> T {
        try await database.withPool(size: 1) { pool in
            try await pool.withTransaction { connection in
                try await connection.query("INSERT INTO users (tenant_id, user_id) VALUES (\(tenant), \(user)) ON CONFLICT DO NOTHING")
                try await connection.query("SELECT 1 FROM users WHERE tenant_id = \(tenant) AND user_id = \(user) FOR UPDATE")
                return try await body()
            }
        }
    }

    /// Waits until `count` backends of this database wait for a lock. Bounded by a count of
    /// checks, not a deadline, and generous: a busy machine only makes it take longer.
    func waitForLockWaiters(_ count: Int) async throws {
        try await database.withPool(size: 1) { pool in
            for _ in 0..<6000 {
                let waiting = try await pool.withConnection {
                    // On Citus the rows, and so the lock waits, are on the workers.
                    try await $0.query(TestPostgres.onCitus
                        ? "SELECT count(*) AS n FROM citus_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                        : "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").single().decode("n", as: Int.self)
                }
                if waiting >= count { return }
                try await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("never saw \(count) backends waiting for a lock")
        }
    }

    /// Rows of a table as the owner sees them (all tenants), for checks behind the API's back.
    func count(_ table: String, where condition: String = "true") async throws -> Int {
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection {
                try await $0.query(PGQuery(unsafeSQL: "SELECT count(*) AS n FROM \(table) WHERE \(condition)")).single().decode("n", as: Int.self)
            }
        }
    }
}

/// A device of a sync test: ServerHarness's `DeviceClient` (the one HTTP device client the
/// harness, the fault suite and the fuzzer use too), with the wire JSON decoded and every
/// answer checked to be no 5xx (but 503 where a test expects it).
struct SyncClient: Sendable {
    let client: DeviceClient

    init(baseURL: String, token: String, device: String, connections: Int = 8) {
        // A bound, not a latency check: the whole suite runs its tests at once on a debug build,
        // where a 1,000-change push beside dozens of other tests has taken over 60 s.
        client = DeviceClient(baseURL: baseURL, token: token, device: device, timeout: 300, connections: connections)
    }

    private init(client: DeviceClient) { self.client = client }

    var baseURL: String { client.baseURL }
    var token: String { client.token }
    var device: String { client.device }

    func withDevice(_ device: String) -> SyncClient { SyncClient(client: client.withDevice(device)) }

    struct PushReply {
        let status: Int
        let body: Data
        let json: JSON
        var results: [JSON] { json["results"] as? [JSON] ?? [] }
        func result(_ index: Int) -> JSON { results.first { $0["index"] as? Int == index } ?? [:] }
        func status(_ index: Int) -> String? { result(index)["status"] as? String }
        func errorCode(_ index: Int) -> String? { (result(index)["error"] as? JSON)?["code"] as? String }
    }

    func push(_ changes: [JSON], batchID: UUID = UUID(), headers extra: [String: String] = [:], allowUnavailable: Bool = false) async throws -> PushReply {
        let body = try JSONSerialization.data(withJSONObject: ["batchId": batchID.uuidString, "changes": changes])
        return try await pushRaw(body, headers: extra, allowUnavailable: allowUnavailable)
    }

    /// - Parameter allowUnavailable: the one 5xx the protocol has (503, retry) is expected.
    func pushRaw(_ body: Data, headers extra: [String: String] = [:], allowUnavailable: Bool = false) async throws -> PushReply {
        let reply = try await client.push(body, headers: extra)
        #expect(reply.status < 500 || (allowUnavailable && reply.status == 503), "push answered \(reply.status): \(reply.text.prefix(300))")
        return PushReply(status: reply.status, body: reply.body, json: (try? reply.json()) ?? [:])
    }

    struct PullReply {
        let status: Int
        let json: JSON
        var changes: [JSON] { json["changes"] as? [JSON] ?? [] }
        var cursor: String? { json["cursor"] as? String }
        var hasMore: Bool { json["hasMore"] as? Bool ?? false }
        var errorCode: String? { (json["error"] as? JSON)?["code"] as? String }
    }

    func pull(cursor: String? = nil, limit: Int? = nil, collections: String? = nil, extra: String = "") async throws -> PullReply {
        let reply = try await client.pull(cursor: cursor, limit: limit, collections: collections, extra: extra)
        #expect(reply.status < 500, "pull answered \(reply.status): \(reply.text.prefix(300))")
        return PullReply(status: reply.status, json: (try? reply.json()) ?? [:])
    }

    /// Pulls until `hasMore` is false; returns every change and the last cursor.
    func pullAll(from cursor: String? = nil, limit: Int = 500) async throws -> (changes: [JSON], cursor: String?) {
        var all: [JSON] = []
        var cursor = cursor
        while true {
            let page = try await pull(cursor: cursor, limit: limit)
            #expect(page.status == 200)
            all += page.changes
            cursor = page.cursor
            if !page.hasMore { return (all, cursor) }
        }
    }

    /// The latest pulled change per (collection, id).
    func state() async throws -> [String: JSON] {
        var state: [String: JSON] = [:]
        for change in try await pullAll().changes {
            state["\(change["collection"] ?? "?")/\(change["id"] ?? "?")"] = change
        }
        return state
    }
}

/// Builders for the wire format.
enum Wire {
    static let base = Date(timeIntervalSince1970: 1_795_162_530)  // 2026-11-20T08:15:30Z

    static func at(_ offsetSeconds: Double) -> String { WireTime.format(base.addingTimeInterval(offsetSeconds)) }

    static func change(_ collection: String, _ id: UUID, at time: String, record: JSON?) -> JSON {
        var change: JSON = ["collection": collection, "op": record == nil ? "delete" : "upsert", "id": id.uuidString.lowercased(), "updatedAt": time]
        if let record { change["record"] = record }
        return change
    }

    static func habit(name: String = "Read", goal: Int = 10) -> JSON {
        ["name": name, "habitType": "formation", "goalCount": goal, "goalUnit": "pages", "schedule": ["type": "daily"], "startDate": "2026-11-01"]
    }

    static func reminder(habit: UUID, time: String = "07:30") -> JSON { ["habitId": habit.uuidString, "time": time] }

    static func progress(habit: UUID, date: String = "2026-11-20", count: Int = 1) -> JSON {
        ["habitId": habit.uuidString, "date": date, "progressCount": count, "goalCount": 10]
    }

    static func focus(state: String = "completed", start: Double = 0, duration: Double = 1500) -> JSON {
        var record: JSON = ["startTime": at(start), "state": state, "duration": duration]
        if state == "completed" || state == "abandoned" { record["endTime"] = at(start + 1500) }
        return record
    }

    static func selectedApp(name: String = "Instagram", order: Int = 0) -> JSON {
        ["appName": name, "iconName": "camera", "urlScheme": "instagram://", "dateAdded": at(0), "orderIndex": order]
    }

    static func settings(timer: Int = 30) -> JSON { ["timezone": "Europe/Berlin", "gatewayTimerDuration": timer] }

    static func xp(amount: Int = 50, reason: String = "bonus") -> JSON { ["amount": amount, "reason": reason, "timestamp": at(0)] }

    static func usageEvent(pause: Double = 10) -> JSON { ["eventType": "exit_to_focus", "timestamp": at(0), "pauseDuration": pause, "timerDuration": 30] }

    static func achievement(id: String = "first_week", unlockedAt: Double = 0) -> JSON {
        ["achievementId": id, "title": "First week", "unlockedAt": at(unlockedAt)]
    }
}

/// Cursor text for a version, as the server encodes it (tests only; devices treat it as opaque).
enum PullCursorText {
    static func at(version: Int) -> String { PullCursor(version: Int64(version)).text }
}
