import Foundation
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import Logging
import ServiceLifecycle
import Synchronization

/// What each tenant's devices use of this replica (docs/analytics.md, "Tenant usage"), counted
/// in memory per tenant and UTC day and added to `tenant_usage` every `flushInterval` in one
/// statement, and once more when the server stops. Counts that could not be written (the
/// database away) are kept and added with the next flush.
///
/// It also knows each tenant's changes received today, for the daily records limit: the
/// day's total of all replicas as the database last gave it (returned to a flush, or read
/// once a flush interval old), plus what this replica counted since — also while a flush is
/// writing it. A read that a flush overlapped is not used (it may or may not hold that
/// flush's counts), so this replica's own counts are never missed or counted twice; other
/// replicas' arrive within a flush interval.
public final class TenantMeter: Service, Sendable {
    private struct State {
        var pending: [TenantUsageStore.Key: TenantUsage] = [:]
        /// Who was active since the last flush (the database keeps each once a day).
        var members: Set<TenantUsageStore.Member> = []
        /// What the flush running now is writing.
        var inFlight: [TenantUsageStore.Key: TenantUsage] = [:]
        var membersInFlight: Set<TenantUsageStore.Member> = []
        /// When this replica last counted each tenant's stored rows.
        var storageCountedAt: [UUID: ContinuousClock.Instant] = [:]
        /// Flushes begun: a read of the totals that one began during is not used.
        var flushesBegun = 0
        /// The day's changes received as the database last gave them, and when.
        var stored: [TenantUsageStore.Key: (total: Int64, at: ContinuousClock.Instant)] = [:]
    }

    public let flushInterval: Duration
    /// How often this replica counts a tenant's stored rows for the metering (a count reads a
    /// row per user of the tenant).
    public let storedRowsInterval: Duration
    private let store: TenantUsageStore
    private let logger: Logger
    private let state = Mutex(State())
    private let clock = ContinuousClock()

    public init(store: TenantUsageStore, flushInterval: Duration = .seconds(10), storedRowsInterval: Duration = .seconds(3600), logger: Logger) {
        self.store = store
        self.flushInterval = flushInterval
        self.storedRowsInterval = storedRowsInterval
        self.logger = logger
    }

    static func today(_ now: Date = Date()) -> LocalDate { LocalDate(now, in: .gmt) }

    /// Adds to the tenant's counts of today.
    func count(_ tenant: UUID, _ add: (inout TenantUsage) -> Void) {
        let key = TenantUsageStore.Key(tenant: tenant, day: Self.today())
        state.withLock { add(&$0.pending[key, default: TenantUsage()]) }
    }

    /// Notes a user, and the device when it said which, as active today.
    func seen(_ tenant: UUID, user: String, device: String?) {
        let key = TenantUsageStore.Key(tenant: tenant, day: Self.today())
        state.withLock { state in
            state.members.insert(.user(user, key))
            if let device { state.members.insert(.device(device, of: user, key)) }
        }
    }

    /// The tenant's changes received today: all replicas' as the database last gave them, and
    /// this replica's since.
    func changesReceivedToday(_ tenant: UUID) async throws -> Int64 {
        let key = TenantUsageStore.Key(tenant: tenant, day: Self.today())
        for _ in 0..<3 {
            let now = clock.now
            // Known and fresh, or a flush of it is writing (it returns the total): as known.
            let (known, begun) = state.withLock { state -> (Int64?, Int) in
                guard let stored = state.stored[key], now - stored.at < flushInterval || state.inFlight[key] != nil else { return (nil, state.flushesBegun) }
                return (stored.total + Self.unwritten(state, key), state.flushesBegun)
            }
            if let known { return known }
            let total = try await store.usage(tenant: tenant, from: key.day, to: key.day).first?.usage.changesReceived ?? 0
            let read = state.withLock { state -> Int64? in
                guard state.flushesBegun == begun else { return state.stored[key].map { $0.total + Self.unwritten(state, key) } }
                state.stored[key] = (total, now)
                return total + Self.unwritten(state, key)
            }
            if let read { return read }
        }
        // Flushes kept overlapping the read (a flush interval far below a read's time).
        throw APIError(.databaseBusy, "the tenant's daily count could not be read; retry shortly")
    }

    private static func unwritten(_ state: State, _ key: TenantUsageStore.Key) -> Int64 {
        (state.pending[key]?.changesReceived ?? 0) + (state.inFlight[key]?.changesReceived ?? 0)
    }

    /// Writes what was counted since the last flush; on failure keeps it for the next. The
    /// tenants counted whose stored rows this replica has not counted for `storedRowsInterval`
    /// are counted first (one after the other, off the requests' path).
    public func flush() async {
        let today = Self.today()
        let (taken, members, storageDue) = state.withLock { state in
            guard !state.pending.isEmpty || !state.members.isEmpty else { return ([TenantUsageStore.Key: TenantUsage](), Set<TenantUsageStore.Member>(), [UUID]()) }
            state.flushesBegun += 1
            state.inFlight = state.pending
            state.membersInFlight = state.members
            state.pending = [:]
            state.members = []
            let now = clock.now
            let tenants = Set(state.inFlight.keys.map(\.tenant)).union(state.membersInFlight.map(\.key.tenant))
            let due = tenants.filter { tenant in state.storageCountedAt[tenant].map { now - $0 >= storedRowsInterval } ?? true }
            for tenant in due { state.storageCountedAt[tenant] = now }
            return (state.inFlight, state.membersInFlight, Array(due))
        }
        guard !taken.isEmpty || !members.isEmpty else { return }
        var counts = taken
        for tenant in storageDue {
            do {
                counts[TenantUsageStore.Key(tenant: tenant, day: today), default: TenantUsage()].storedRows = try await store.storedRows(tenantID: tenant)
            } catch {
                // Counted again at the next flush.
                state.withLock { _ = $0.storageCountedAt.removeValue(forKey: tenant) }
            }
        }
        do {
            let totals = try await store.add(counts, members: members, keepMembersFrom: today.adding(days: -1))
            let now = clock.now
            state.withLock { state in
                state.stored = state.stored.filter { $0.key.day == today }
                for (key, total) in totals where key.day == today { state.stored[key] = (total, now) }
                state.inFlight = [:]
                state.membersInFlight = []
            }
        } catch {
            state.withLock { state in
                for (key, usage) in state.inFlight { state.pending[key] = usage + (state.pending[key] ?? TenantUsage()) }
                state.members.formUnion(state.membersInFlight)
                state.inFlight = [:]
                state.membersInFlight = []
                for tenant in storageDue { state.storageCountedAt.removeValue(forKey: tenant) }
            }
            // The database's code and message (no counts or ids of its statement's values).
            let reason = (error as? PGError).map { "\($0.sqlState?.description ?? "?") \($0.message)" } ?? String(describing: type(of: error))
            logger.warning("tenant usage not written; kept for the next flush", metadata: ["error": .string(reason)])
        }
    }

    /// Flushes every `flushInterval` until the server stops, then once more.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            // The sleep throws once shutdown cancels it.
            while (try? await Task.sleep(for: self.flushInterval)) != nil { await self.flush() }
        }
        await flush()
    }
}
