import Foundation
import HabitSyncDomain
import LibPQClient

/// What a tenant used on a UTC day (`tenant_usage`, migrations 0043 and 0045): each replica's
/// counts are added to the day's row; the active users and devices are those no replica had
/// added before (`TenantUsageStore.Member`); the stored rows are a level, the latest count.
public struct TenantUsage: Sendable, Equatable {
    public var pushes: Int64 = 0
    public var changesReceived: Int64 = 0
    public var changesApplied: Int64 = 0
    public var pushesRefused: Int64 = 0
    public var pulls: Int64 = 0
    public var bytesIn: Int64 = 0
    public var bytesOut: Int64 = 0
    public var activeUsers: Int64 = 0
    public var activeDevices: Int64 = 0
    /// Nil: not counted.
    public var storedRows: Int64?

    public init() {}

    /// Counts added; the stored rows of the later (`rhs`) where it has them.
    public static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.pushes += rhs.pushes
        sum.changesReceived += rhs.changesReceived
        sum.changesApplied += rhs.changesApplied
        sum.pushesRefused += rhs.pushesRefused
        sum.pulls += rhs.pulls
        sum.bytesIn += rhs.bytesIn
        sum.bytesOut += rhs.bytesOut
        sum.activeUsers += rhs.activeUsers
        sum.activeDevices += rhs.activeDevices
        sum.storedRows = rhs.storedRows ?? lhs.storedRows
        return sum
    }
}

/// The tenant usage table: a replica's counts added in one statement for every tenant and day
/// it counted; a tenant's days read back for the CLI and for the daily records limit.
public struct TenantUsageStore: Sendable {
    public let pool: PGPool

    public init(pool: PGPool) { self.pool = pool }

    /// A tenant and UTC day counted.
    public struct Key: Hashable, Sendable {
        public let tenant: UUID
        public let day: LocalDate

        public init(tenant: UUID, day: LocalDate) {
            self.tenant = tenant
            self.day = day
        }
    }

    /// Someone active on a tenant's day: a user, or a user's device (`who`: the user id, or the
    /// user id, U+001F and the device id; ids hold no control characters). Sent to the database
    /// only to be hashed (`habitsync_member_hash`).
    public struct Member: Hashable, Sendable {
        public enum Kind: String, Sendable { case user, device }
        public let key: Key
        public let kind: Kind
        public let who: String

        public static func user(_ user: String, _ key: Key) -> Member { Member(key: key, kind: .user, who: user) }
        public static func device(_ device: String, of user: String, _ key: Key) -> Member { Member(key: key, kind: .device, who: user + "\u{1F}" + device) }
    }

    /// Adds `members` where no replica has yet; returns how many users and devices of each day
    /// were new.
    static func addMembers(_ members: [Member]) -> PGQuery {
        """
        WITH added AS (
            INSERT INTO tenant_active_members (day, tenant_id, kind, member)
            SELECT DISTINCT m.day, m.tenant_id, m.kind, habitsync_member_hash(m.tenant_id, m.who)
            FROM unnest(\(members.map(\.key.day))::date[], \(members.map(\.key.tenant))::uuid[], \(members.map(\.kind.rawValue))::text[], \(members.map(\.who))::text[])
                 AS m (day, tenant_id, kind, who)
            ON CONFLICT DO NOTHING
            RETURNING day, tenant_id, kind)
        SELECT tenant_id, day::text AS day, count(*) FILTER (WHERE kind = 'user') AS users, count(*) FILTER (WHERE kind = 'device') AS devices
        FROM added GROUP BY tenant_id, day
        """
    }

    /// The members of days before `day` (kept two days: today's and yesterday's).
    static func pruneMembers(before day: LocalDate) -> PGQuery {
        "DELETE FROM tenant_active_members WHERE day < \(day)"
    }

    /// Adds every key's counts to its row (the stored rows replace the row's where counted);
    /// returns each row's changes received after. The time is a value, not now(): Citus takes
    /// only immutable functions in DO UPDATE.
    static func add(_ counts: [(key: Key, usage: TenantUsage)]) -> PGQuery {
        """
        INSERT INTO tenant_usage AS t (tenant_id, day, pushes, changes_received, changes_applied, pushes_refused, pulls, bytes_in, bytes_out,
                                       active_users, active_devices, stored_rows, updated_at)
        SELECT c.*, \(Date())::timestamptz FROM unnest(\(counts.map(\.key.tenant))::uuid[], \(counts.map(\.key.day))::date[], \(counts.map(\.usage.pushes))::int8[],
                               \(counts.map(\.usage.changesReceived))::int8[], \(counts.map(\.usage.changesApplied))::int8[],
                               \(counts.map(\.usage.pushesRefused))::int8[], \(counts.map(\.usage.pulls))::int8[],
                               \(counts.map(\.usage.bytesIn))::int8[], \(counts.map(\.usage.bytesOut))::int8[],
                               \(counts.map(\.usage.activeUsers))::int8[], \(counts.map(\.usage.activeDevices))::int8[], \(counts.map(\.usage.storedRows))::int8[])
                          AS c (tenant_id, day, pushes, changes_received, changes_applied, pushes_refused, pulls, bytes_in, bytes_out,
                                active_users, active_devices, stored_rows)
        ON CONFLICT (tenant_id, day) DO UPDATE SET
            pushes = t.pushes + EXCLUDED.pushes, changes_received = t.changes_received + EXCLUDED.changes_received,
            changes_applied = t.changes_applied + EXCLUDED.changes_applied, pushes_refused = t.pushes_refused + EXCLUDED.pushes_refused,
            pulls = t.pulls + EXCLUDED.pulls, bytes_in = t.bytes_in + EXCLUDED.bytes_in, bytes_out = t.bytes_out + EXCLUDED.bytes_out,
            active_users = t.active_users + EXCLUDED.active_users, active_devices = t.active_devices + EXCLUDED.active_devices,
            stored_rows = coalesce(EXCLUDED.stored_rows, t.stored_rows), updated_at = EXCLUDED.updated_at
        RETURNING t.tenant_id, t.day::text AS day, t.changes_received
        """
    }

    static func select(tenant: UUID, from: LocalDate, to: LocalDate) -> PGQuery {
        """
        SELECT day::text AS day, pushes, changes_received, changes_applied, pushes_refused, pulls, bytes_in, bytes_out, active_users, active_devices, stored_rows
        FROM tenant_usage WHERE tenant_id = \(tenant) AND day BETWEEN \(from) AND \(to) ORDER BY day
        """
    }

    /// Which of `tenants` still exist (policy `meter_read` shows a flush every tenant): the
    /// counts of a tenant erased since they were made are dropped, not left failing the
    /// others' on the foreign key. Read apart from the insert, which Citus runs on the nodes.
    static func existing(_ tenants: [UUID]) -> PGQuery {
        "SELECT id FROM tenants WHERE id = ANY(\(tenants)::uuid[])"
    }

    /// The rows the tenant stores now, as its storage limit counts them
    /// (`TenantLimitsStore.storedRows`).
    public func storedRows(tenantID: UUID) async throws -> Int64 {
        try await TenantLimitsStore(pool: pool).storedRows(tenantID: tenantID)
    }

    /// The transaction of a flush: it writes several tenants' rows (policy `meter_write`).
    static let meterScope = [PGLocalSetting("habitsync.scope", "meter")]

    /// Adds `counts` and, as active users and devices, the `members` no replica added before;
    /// returns the changes received of each key's day after. Members of days before
    /// `keepMembersFrom` are deleted.
    public func add(_ counts: [Key: TenantUsage], members: Set<Member> = [], keepMembersFrom: LocalDate) async throws -> [Key: Int64] {
        guard !counts.isEmpty || !members.isEmpty else { return [:] }
        return try await pool.withTransaction(localSettings: Self.meterScope) { connection in
            let tenants = Set(counts.keys.map(\.tenant)).union(members.map(\.key.tenant))
            let existing = Set(try await connection.query(Self.existing(Array(tenants))).rows.map { try $0.decode("id", as: UUID.self) })
            var kept = counts.filter { existing.contains($0.key.tenant) }
            let keptMembers = members.filter { existing.contains($0.key.tenant) }
            if !keptMembers.isEmpty {
                let results = try await connection.pipeline([Self.addMembers(Array(keptMembers)), Self.pruneMembers(before: keepMembersFrom)])
                for row in results[0].rows {
                    guard let day = LocalDate(try row.decode("day", as: String.self)) else { continue }
                    let key = Key(tenant: try row.decode("tenant_id", as: UUID.self), day: day)
                    kept[key, default: TenantUsage()].activeUsers += try row.decode("users", as: Int64.self)
                    kept[key, default: TenantUsage()].activeDevices += try row.decode("devices", as: Int64.self)
                }
            }
            guard !kept.isEmpty else { return [:] }
            var totals: [Key: Int64] = [:]
            for row in try await connection.query(Self.add(kept.map { (key: $0.key, usage: $0.value) })).rows {
                guard let day = LocalDate(try row.decode("day", as: String.self)) else { continue }
                totals[Key(tenant: try row.decode("tenant_id", as: UUID.self), day: day)] = try row.decode("changes_received", as: Int64.self)
            }
            return totals
        }
    }

    /// The tenant's days from `from` to `to`, those with any use.
    public func usage(tenant: UUID, from: LocalDate, to: LocalDate) async throws -> [(day: LocalDate, usage: TenantUsage)] {
        try await pool.withTransaction(readOnly: true) { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: nil)
            return try await connection.query(Self.select(tenant: tenant, from: from, to: to)).rows.compactMap { row in
                guard let day = LocalDate(try row.decode("day", as: String.self)) else { return nil }
                var usage = TenantUsage()
                usage.pushes = try row.decode("pushes", as: Int64.self)
                usage.changesReceived = try row.decode("changes_received", as: Int64.self)
                usage.changesApplied = try row.decode("changes_applied", as: Int64.self)
                usage.pushesRefused = try row.decode("pushes_refused", as: Int64.self)
                usage.pulls = try row.decode("pulls", as: Int64.self)
                usage.bytesIn = try row.decode("bytes_in", as: Int64.self)
                usage.bytesOut = try row.decode("bytes_out", as: Int64.self)
                usage.activeUsers = try row.decode("active_users", as: Int64.self)
                usage.activeDevices = try row.decode("active_devices", as: Int64.self)
                usage.storedRows = try row.decodeIfPresent("stored_rows", as: Int64.self)
                return (day, usage)
            }
        }
    }
}
