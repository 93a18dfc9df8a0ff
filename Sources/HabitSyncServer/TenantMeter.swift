import Foundation
import HabitSyncDomain
import HabitSyncStore
import Logging
import ServiceLifecycle
import Synchronization

/// What each tenant's devices use of this replica (docs/analytics.md, "Tenant usage"), counted
/// in memory per tenant and UTC day and added to `tenant_usage` every `flushInterval` in one
/// statement, and once more when the server stops. Counts that could not be written (the
/// database away) are kept and added with the next flush.
///
/// It also knows each tenant's changes received today, for the daily records limit: the
/// day's total as the database last told it (a flush returns it; a tenant this replica has
/// not flushed is read when asked) plus what this replica counted since.
public final class TenantMeter: Service, Sendable {
    private struct State {
        var pending: [TenantUsageStore.Key: TenantUsage] = [:]
        /// The day's changes received as the database last said, and when it said it.
        var stored: [TenantUsageStore.Key: (total: Int64, at: ContinuousClock.Instant)] = [:]
    }

    public let flushInterval: Duration
    private let store: TenantUsageStore
    private let logger: Logger
    private let state = Mutex(State())
    private let clock = ContinuousClock()

    public init(store: TenantUsageStore, flushInterval: Duration = .seconds(10), logger: Logger) {
        self.store = store
        self.flushInterval = flushInterval
        self.logger = logger
    }

    static func today(_ now: Date = Date()) -> LocalDate { LocalDate(now, in: .gmt) }

    /// Adds to the tenant's counts of today.
    func count(_ tenant: UUID, _ add: (inout TenantUsage) -> Void) {
        let key = TenantUsageStore.Key(tenant: tenant, day: Self.today())
        state.withLock { add(&$0.pending[key, default: TenantUsage()]) }
    }

    /// The tenant's changes received today, all replicas: as the database last said (read
    /// again once a flush interval old) and this replica's since.
    func changesReceivedToday(_ tenant: UUID) async throws -> Int64 {
        let key = TenantUsageStore.Key(tenant: tenant, day: Self.today())
        let now = clock.now
        if let known = state.withLock({ state in state.stored[key].map { ($0, state.pending[key]?.changesReceived ?? 0) } }),
            now - known.0.at < flushInterval
        {
            return known.0.total + known.1
        }
        let total = try await store.usage(tenant: tenant, from: key.day, to: key.day).first?.usage.changesReceived ?? 0
        return state.withLock { state in
            state.stored[key] = (total, now)
            return total + (state.pending[key]?.changesReceived ?? 0)
        }
    }

    /// Writes what was counted since the last flush; on failure keeps it for the next.
    public func flush() async {
        let taken = state.withLock { state in
            defer { state.pending = [:] }
            return state.pending
        }
        guard !taken.isEmpty else { return }
        do {
            let totals = try await store.add(taken.map { (key: $0.key, usage: $0.value) })
            let now = clock.now
            let today = Self.today()
            state.withLock { state in
                state.stored = state.stored.filter { $0.key.day == today }
                for (key, total) in totals where key.day == today { state.stored[key] = (total, now) }
            }
        } catch {
            state.withLock { state in
                for (key, usage) in taken { state.pending[key] = usage + (state.pending[key] ?? TenantUsage()) }
            }
            logger.warning("tenant usage not written; kept for the next flush", metadata: ["error": .string(String(describing: type(of: error)))])
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
