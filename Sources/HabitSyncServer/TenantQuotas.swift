import Foundation
import HabitSyncDomain
import HabitSyncStore
import Synchronization

/// The tenant quotas as this replica enforces them (docs/operations.md, "Tenant quotas"): each
/// tenant's limits (`tenant set-limits`), read from the database and kept for `cacheLifetime`;
/// a token bucket per tenant for pushes and for records a second, holding this replica's share
/// (the limit divided by `replicas`); the tenant's stored rows, counted again every
/// `storageRefresh` while it has a storage limit; the day's changes through `TenantMeter`.
/// Refusals are `APIError`s of kind `tenantLimit`, naming the limit, with the seconds until it
/// would admit the request.
public final class TenantQuotas: Sendable {
    public struct Settings: Sendable {
        /// How long a tenant's limits are used before they are read again: a change reaches
        /// every replica within it.
        public var cacheLifetime: Duration
        /// How often a tenant's stored rows are counted again (a count reads a row per user).
        public var storageRefresh: Duration
        /// How many replicas share each limit a second and each stream limit: each enforces
        /// its part (docs/operations.md, "Several replicas").
        public var replicas: Int

        public init(cacheLifetime: Duration = .seconds(10), storageRefresh: Duration = .seconds(60), replicas: Int = 1) {
            self.cacheLifetime = cacheLifetime
            self.storageRefresh = storageRefresh
            self.replicas = max(1, replicas)
        }
    }

    private struct Entry {
        var limits: TenantLimits
        var fetchedAt: ContinuousClock.Instant
        var pushes: TokenBucket?
        var records: TokenBucket?
        var storedRows: Int64?
        var storageCountedAt: ContinuousClock.Instant?
    }

    public let settings: Settings
    private let store: TenantLimitsStore
    /// The tenants' changes received today, for the daily limit.
    private let meter: TenantMeter
    private let entries = Mutex([UUID: Entry]())
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant

    public init(store: TenantLimitsStore, meter: TenantMeter, settings: Settings = Settings()) {
        self.store = store
        self.meter = meter
        self.settings = settings
        started = clock.now
    }

    private var seconds: Double { (clock.now - started) / .seconds(1) }

    /// This replica's part of a limit a second or of streams.
    func share(_ limit: Int64) -> Double { Double(limit) / Double(settings.replicas) }

    /// The tenant's limits, read again once `cacheLifetime` has passed; the buckets are kept
    /// while their limit stays the same.
    func limits(_ tenant: UUID) async throws -> TenantLimits {
        let now = clock.now
        if let cached = entries.withLock({ $0[tenant] }), now - cached.fetchedAt < settings.cacheLifetime { return cached.limits }
        let limits = try await store.limits(tenantID: tenant)
        let at = seconds
        entries.withLock { entries in
            var entry = entries[tenant] ?? Entry(limits: TenantLimits(), fetchedAt: now)
            if entry.limits[.pushesPerSecond] != limits[.pushesPerSecond] || entry.pushes == nil {
                entry.pushes = limits[.pushesPerSecond].map { TokenBucket(rate: share($0), now: at) }
            }
            if entry.limits[.recordsPerSecond] != limits[.recordsPerSecond] || entry.records == nil {
                entry.records = limits[.recordsPerSecond].map { TokenBucket(rate: share($0), now: at) }
            }
            if limits[.storageRows] == nil { (entry.storedRows, entry.storageCountedAt) = (nil, nil) }
            entry.limits = limits
            entry.fetchedAt = now
            entries[tenant] = entry
        }
        return limits
    }

    /// A push's place in the tenant's pushes a second, taken as its request arrives, before
    /// its body is read: a tenant flooding past its limit costs the server the request head
    /// only. `admit` settles it once the body is read.
    struct PushTicket: Sendable {
        let tenant: UUID
        let limits: TenantLimits
        let tookPush: Bool
    }

    /// Takes the push's place, or throws `pushesPerSecond`.
    func arrivingPush(tenant: UUID) async throws -> PushTicket {
        let limits = try await limits(tenant)
        guard limits[.pushesPerSecond] != nil else { return PushTicket(tenant: tenant, limits: limits, tookPush: false) }
        let now = seconds
        let wait = entries.withLock { $0[tenant]?.pushes?.take(1, now: now) }
        if let wait { throw Self.refusal(.pushesPerSecond, limit: limits[.pushesPerSecond] ?? 0, retryAfter: wait) }
        return PushTicket(tenant: tenant, limits: limits, tookPush: true)
    }

    /// Admits the push of `ticket`, of `changes` changes, or gives its place back and throws
    /// the limit it is over. `deletesOnly`: a push that only deletes is taken above the
    /// storage limit (it frees rows).
    func admit(_ ticket: PushTicket, changes: Int, deletesOnly: Bool) async throws {
        let (tenant, limits) = (ticket.tenant, ticket.limits)
        guard !limits.isEmpty else { return }
        do {
            if let limit = limits[.storageRows], !deletesOnly, try await storedRows(tenant) >= limit {
                throw Self.refusal(.storageRows, limit: limit, retryAfter: settings.storageRefresh / .seconds(1))
            }
            if let limit = limits[.recordsPerDay], try await meter.changesReceivedToday(tenant) + Int64(changes) > limit {
                throw Self.refusal(.recordsPerDay, limit: limit, retryAfter: Self.secondsUntilTomorrow())
            }
            let now = seconds
            let wait = entries.withLock { $0[tenant]?.records?.take(Double(changes), now: now) }
            if let wait { throw Self.refusal(.recordsPerSecond, limit: limits[.recordsPerSecond] ?? 0, retryAfter: wait) }
        } catch {
            if ticket.tookPush { entries.withLock { $0[tenant]?.pushes?.giveBack(1) } }
            throw error
        }
    }

    /// The tenant's stored rows, counted again when `storageRefresh` has passed: by the one
    /// request that finds the count old, while the others go on with it.
    private func storedRows(_ tenant: UUID) async throws -> Int64 {
        let now = clock.now
        let held = entries.withLock { entries -> (rows: Int64, recount: Bool)? in
            guard let rows = entries[tenant]?.storedRows, let at = entries[tenant]?.storageCountedAt else { return nil }
            guard now - at >= settings.storageRefresh else { return (rows, false) }
            entries[tenant]?.storageCountedAt = now
            return (rows, true)
        }
        if let held, !held.recount { return held.rows }
        let rows = try await store.storedRows(tenantID: tenant)
        entries.withLock { entries in
            entries[tenant]?.storedRows = rows
            entries[tenant]?.storageCountedAt = now
        }
        return rows
    }

    /// How many streams this replica may hold open for the tenant; nil: no limit.
    func streamLimit(tenant: UUID) async throws -> Int? {
        try await limits(tenant)[.streams].map { Int(share($0).rounded(.up)) }
    }

    /// Until the next UTC day, when the daily limit starts again.
    public static func secondsUntilTomorrow(_ now: Date = Date()) -> Double {
        Double(TenantMeter.today(now).dayNumber + 1) * 86_400 - now.timeIntervalSince1970
    }

    static func refusal(_ kind: TenantLimits.Kind, limit: Int64, retryAfter seconds: Double) -> APIError {
        var error = APIError(.tenantLimit, "the tenant's limit \(kind.rawValue) (\(limit)) is reached; retry after the time Retry-After gives")
        error.limit = kind.rawValue
        error.retryAfterSeconds = max(1, Int(min(seconds, 86_400).rounded(.up)))
        return error
    }
}
