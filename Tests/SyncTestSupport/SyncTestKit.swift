import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import TestSupport
import Testing

public typealias JSON = [String: Any]

/// A migrated database with one tenant, and the real server over it.
public struct SyncWorld: Sendable {
    public let database: TestDatabase
    public let tenant: UUID
    public let key: TenantKey

    public init(database: TestDatabase, tenant: UUID, key: TenantKey) {
        self.database = database
        self.tenant = tenant
        self.key = key
    }

    public static func make(name: String = "acme") async throws -> SyncWorld {
        try await make(on: try await TestPostgres.shared.migratedDatabase(), name: name)
    }

    /// One tenant on a database the caller made (an undistributed one, on Citus).
    public static func make(on database: TestDatabase, name: String = "acme") async throws -> SyncWorld {
        let key = TenantKey.generatedSecret()
        let tenant = try await database.withPool(size: 1) { try await TenantStore(pool: $0).create(name: name, key: key) }
        return SyncWorld(database: database, tenant: tenant.id, key: key)
    }

    public func addTenant(_ name: String) async throws -> (UUID, TenantKey) {
        let key = TenantKey.generatedSecret()
        let tenant = try await database.withPool(size: 1) { try await TenantStore(pool: $0).create(name: name, key: key) }
        return (tenant.id, key)
    }

    public func token(user: String, tenant: UUID? = nil, key: TenantKey? = nil) async throws -> String {
        try await TokenMinter.mint(tenantID: tenant ?? self.tenant, userID: user, key: key ?? self.key, ttl: 3600)
    }

    public func client(_ server: RunningServer, user: String, device: String = "iphone-A") async throws -> SyncClient {
        SyncClient(baseURL: server.baseURL, token: try await token(user: user), device: device)
    }

    /// Runs `body` with the server up (on Citus with `routeToNodes`, each user's requests on
    /// the user's node).
    public func serve<T: Sendable>(
        _ configuration: ServerConfiguration = .forTests, poolSize: Int = 4, routeToNodes: Bool = false, _ body: (RunningServer) async throws -> T
    ) async throws -> T {
        try await RunningServer.with(database: database, configuration: configuration, poolSize: poolSize, routeToNodes: routeToNodes, body)
    }

    /// Runs `body` while a transaction of the test holds `user`'s row lock (the lock every push
    /// of that user takes first), so the user's pushes wait in PostgreSQL until `body` ends.
    public func holdingUserLock<T: Sendable>(_ user: String, _ body: () async throws -> T) async throws -> T {
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
    public func waitForLockWaiters(_ count: Int) async throws {
        try await database.withPool(size: 1) { pool in
            for _ in 0..<6000 {
                let waiting = try await pool.withConnection {
                    // On Citus the rows, and so the lock waits, are on the workers.
                    try await $0.query(
                        TestPostgres.onCitus
                            ? "SELECT count(*) AS n FROM citus_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                            : "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                    ).single().decode("n", as: Int.self)
                }
                if waiting >= count { return }
                try await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("never saw \(count) backends waiting for a lock")
        }
    }

    /// Rows of a table as the owner sees them (all tenants), for checks behind the API's back.
    public func count(_ table: String, where condition: String = "true") async throws -> Int {
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
public struct SyncClient: Sendable {
    public let client: DeviceClient

    public init(baseURL: String, token: String, device: String, connections: Int = 8) {
        // A bound, not a latency check: the whole suite runs its tests at once on a debug build,
        // where a 1,000-change push beside dozens of other tests has taken over 60 s.
        client = DeviceClient(baseURL: baseURL, token: token, device: device, timeout: 300, connections: connections)
    }

    private init(client: DeviceClient) { self.client = client }

    public var baseURL: String { client.baseURL }
    public var token: String { client.token }
    public var device: String { client.device }

    public func withDevice(_ device: String) -> SyncClient { SyncClient(client: client.withDevice(device)) }

    public struct PushReply {
        public let status: Int
        public let body: Data
        public let json: JSON
        public var results: [JSON] { json["results"] as? [JSON] ?? [] }
        public func result(_ index: Int) -> JSON { results.first { $0["index"] as? Int == index } ?? [:] }
        public func status(_ index: Int) -> String? { result(index)["status"] as? String }
        public func errorCode(_ index: Int) -> String? { (result(index)["error"] as? JSON)?["code"] as? String }
    }

    public func push(_ changes: [JSON], batchID: UUID = UUID(), headers extra: [String: String] = [:], allowUnavailable: Bool = false) async throws -> PushReply {
        let body = try JSONSerialization.data(withJSONObject: ["batchId": batchID.uuidString, "changes": changes])
        return try await pushRaw(body, headers: extra, allowUnavailable: allowUnavailable)
    }

    /// - Parameter allowUnavailable: the one 5xx the protocol has (503, retry) is expected.
    public func pushRaw(_ body: Data, headers extra: [String: String] = [:], allowUnavailable: Bool = false) async throws -> PushReply {
        let reply = try await client.push(body, headers: extra)
        #expect(reply.status < 500 || (allowUnavailable && reply.status == 503), "push answered \(reply.status): \(reply.text.prefix(300))")
        return PushReply(status: reply.status, body: reply.body, json: (try? reply.json()) ?? [:])
    }

    public struct PullReply {
        public let status: Int
        public let json: JSON
        public var changes: [JSON] { json["changes"] as? [JSON] ?? [] }
        public var cursor: String? { json["cursor"] as? String }
        public var hasMore: Bool { json["hasMore"] as? Bool ?? false }
        public var errorCode: String? { (json["error"] as? JSON)?["code"] as? String }
    }

    public func pull(cursor: String? = nil, limit: Int? = nil, collections: String? = nil, extra: String = "") async throws -> PullReply {
        let reply = try await client.pull(cursor: cursor, limit: limit, collections: collections, extra: extra)
        #expect(reply.status < 500, "pull answered \(reply.status): \(reply.text.prefix(300))")
        return PullReply(status: reply.status, json: (try? reply.json()) ?? [:])
    }

    /// Pulls until `hasMore` is false; returns every change and the last cursor.
    public func pullAll(from cursor: String? = nil, limit: Int = 500) async throws -> (changes: [JSON], cursor: String?) {
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
    public func state() async throws -> [String: JSON] {
        var state: [String: JSON] = [:]
        for change in try await pullAll().changes {
            state["\(change["collection"] ?? "?")/\(change["id"] ?? "?")"] = change
        }
        return state
    }
}

/// Builders for the wire format.
public enum Wire {
    /// The tests' reference instant: 08:15:30 UTC, ten days before the day the run started (UTC).
    /// It moves with the clock because the server's rules read the clock: the first sync's recent
    /// window, the future-timestamp guard, retention. A fixed date (it was 2026-11-20) turned the
    /// suite red once the clock had moved far enough past it (issue 62). Ten days back is the
    /// distance every run had when the fixtures were written: far enough that `at(offset)` for
    /// the offsets tests use is never in the future, near enough that `day(-20)` is recent.
    public static let base: Date = {
        let today = LocalDate(Date(), in: .gmt)
        return Date(timeIntervalSince1970: Double(today.dayNumber - 10) * 86_400 + 29_730)
    }()

    /// The UTC calendar day of `base`, and the day `offset` days from it as wire text.
    public static let baseDay = LocalDate(base, in: .gmt)
    public static func day(_ offset: Int) -> String { baseDay.adding(days: offset).description }

    public static func at(_ offsetSeconds: Double) -> String { WireTime.format(base.addingTimeInterval(offsetSeconds)) }

    public static func change(_ collection: String, _ id: UUID, at time: String, record: JSON?) -> JSON {
        var change: JSON = ["collection": collection, "op": record == nil ? "delete" : "upsert", "id": id.uuidString.lowercased(), "updatedAt": time]
        if let record { change["record"] = record }
        return change
    }

    public static func habit(name: String = "Read", goal: Int = 10) -> JSON {
        ["name": name, "habitType": "formation", "goalCount": goal, "goalUnit": "pages", "schedule": ["type": "daily"], "startDate": day(-19)]
    }

    public static func reminder(habit: UUID, time: String = "07:30") -> JSON { ["habitId": habit.uuidString, "time": time] }

    public static func progress(habit: UUID, date: String = Wire.day(0), count: Int = 1) -> JSON {
        ["habitId": habit.uuidString, "date": date, "progressCount": count, "goalCount": 10]
    }

    public static func focus(state: String = "completed", start: Double = 0, duration: Double = 1500) -> JSON {
        var record: JSON = ["startTime": at(start), "state": state, "duration": duration]
        if state == "completed" || state == "abandoned" { record["endTime"] = at(start + 1500) }
        return record
    }

    public static func selectedApp(name: String = "Instagram", order: Int = 0) -> JSON {
        ["appName": name, "iconName": "camera", "urlScheme": "instagram://", "dateAdded": at(0), "orderIndex": order]
    }

    public static func settings(timer: Int = 30) -> JSON { ["timezone": "Europe/Berlin", "gatewayTimerDuration": timer] }

    public static func xp(amount: Int = 50, reason: String = "bonus") -> JSON { ["amount": amount, "reason": reason, "timestamp": at(0)] }

    public static func usageEvent(pause: Double = 10) -> JSON { ["eventType": "exit_to_focus", "timestamp": at(0), "pauseDuration": pause, "timerDuration": 30] }

    public static func achievement(id: String = "first_week", unlockedAt: Double = 0) -> JSON {
        ["achievementId": id, "title": "First week", "unlockedAt": at(unlockedAt)]
    }
}

/// Cursor text for a version, as the server encodes it (tests only; devices treat it as opaque).
public enum PullCursorText {
    public static func at(version: Int) -> String { PullCursor(version: Int64(version)).text }
}
