import Foundation
import Synchronization

/// The `tenant` label of the per-tenant counters (docs/operations.md, "Tenant quotas"): a
/// tenant's id for the first `limit` tenants this replica serves, `other` for every tenant
/// after them, so a server of many tenants has at most `limit + 1` series per counter.
public final class TenantMetricLabels: Sendable {
    public let limit: Int
    private let labelled = Mutex(Set<UUID>())

    public init(limit: Int = 50) { self.limit = max(0, limit) }

    public func label(_ tenant: UUID) -> String {
        let own = labelled.withLock { labelled in
            if labelled.contains(tenant) { return true }
            guard labelled.count < limit else { return false }
            labelled.insert(tenant)
            return true
        }
        return own ? tenant.uuidString.lowercased() : "other"
    }
}
