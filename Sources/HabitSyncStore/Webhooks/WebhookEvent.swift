import Foundation
import HabitSyncDomain
import LibPQClient

/// What one push changed, as its webhook deliveries say it (`webhook_deliveries.event`,
/// migration 0046; docs/operations.md, "Webhooks"): the device, the push's server versions, and
/// each applied change's collection, id, operation and version. `derived`: the push moved the
/// user's derived records (streaks, progress, XP awards) too, inside the same versions.
/// Names records, never carries their content (a delivery adds that when its endpoint asks).
struct WebhookEvent: Sendable, Equatable {
    struct Change: Sendable, Equatable {
        let collection: SyncCollection
        let id: String
        let deleted: Bool
        let serverVersion: Int64
    }

    let deviceID: String
    let firstVersion: Int64
    let lastVersion: Int64
    let changes: [Change]
    let derived: Bool

    /// The collections an endpoint's filter is matched against: the pushed ones, and the
    /// derived ones when they moved.
    var collections: [String] {
        var names = Set(changes.map(\.collection.rawValue))
        if derived { names.formUnion(Self.derivedCollections.map(\.rawValue)) }
        return names.sorted()
    }

    /// The server writes these, never a device.
    static let derivedCollections: [SyncCollection] = [.globalStreak, .userProgress, .usageStreak, .xpTransactions]

    var json: String {
        let items = changes.map { change in
            var writer = JSONObjectWriter(reservingCapacity: 96)
            writer.add("collection", change.collection.rawValue)
            writer.add("id", change.id)
            writer.add("op", change.deleted ? "delete" : "upsert")
            writer.add("serverVersion", change.serverVersion)
            return writer.json
        }
        var writer = JSONObjectWriter(reservingCapacity: items.reduce(128) { $0 + $1.utf8.count + 1 })
        writer.add("deviceId", deviceID)
        writer.add("firstVersion", firstVersion)
        writer.add("lastVersion", lastVersion)
        writer.add("changes", jsonArray: items)
        writer.add("derived", derived)
        return writer.json
    }

    /// The push's deliveries, one per endpoint of the tenant whose collections it touched, as
    /// part of the push's closing statement (`PushStore.closePush`): nothing when the tenant
    /// has no endpoint, one index probe of a small table to learn it.
    static func insertDeliveries(_ event: WebhookEvent, tenant: UUID, user: String) -> PGQuery {
        """
        INSERT INTO webhook_deliveries (tenant_id, user_id, endpoint_id, first_version, event)
        SELECT \(tenant), \(user), e.endpoint_id, \(event.firstVersion), \(event.json)::jsonb FROM webhook_endpoints e
        WHERE e.tenant_id = \(tenant) AND (e.collections IS NULL OR e.collections && \(event.collections)::text[])
        """
    }
}

extension PushBatch {
    /// What this push changed for its webhooks; nil when it moved no version.
    func webhookEvent(firstVersion: Int64, derivedFrom: Int64) -> WebhookEvent? {
        let lastVersion = nextVersion - 1
        guard lastVersion >= firstVersion else { return nil }
        let changes = results.compactMap { result -> WebhookEvent.Change? in
            guard let result, result.status == .applied, let version = result.serverVersion, let change = accepted[result.index] else { return nil }
            return WebhookEvent.Change(
                collection: change.collection, id: result.canonicalId?.uuidString.lowercased() ?? result.id ?? change.id.uuidString.lowercased(),
                deleted: change.op == .delete, serverVersion: version)
        }
        return WebhookEvent(
            deviceID: device, firstVersion: firstVersion, lastVersion: lastVersion, changes: changes.sorted { $0.serverVersion < $1.serverVersion },
            derived: nextVersion > derivedFrom)
    }
}
