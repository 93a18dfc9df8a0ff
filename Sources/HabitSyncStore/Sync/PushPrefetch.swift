import Foundation
import HabitSyncDomain
import LibPQClient

/// The reads a push sends with its prologue (the user's lock and the replay lookup), before it
/// writes anything. The push holds the user's lock, so they find what its steps would find:
/// daily progress's stored days and habits when it is the batch's first step
/// (`PushBatch.progressReads`), and, on one node, which of the batch's usage-event ids the
/// registry knows, so that new events are written with the push's closing statements
/// (`PushBatch.applyAppendOnly`). A check-in is then two round trips: this one, and the
/// closing one with its COMMIT.
struct PushPrefetch {
    let queries: [PGQuery]
    private let progressReadCount: Int
    private let readsRegistry: Bool

    /// Nothing read ahead: the slow path, whose steps read under their own savepoints.
    static let none = PushPrefetch(queries: [], progressReadCount: 0, readsRegistry: false)

    private init(queries: [PGQuery], progressReadCount: Int, readsRegistry: Bool) {
        self.queries = queries
        self.progressReadCount = progressReadCount
        self.readsRegistry = readsRegistry
    }

    init(_ plan: PushPlan, tenant: UUID, user: String, singleNode: Bool) {
        var queries: [PGQuery] = []
        if let first = plan.steps.first, first.collection == .dailyProgress {
            queries += PushBatch.progressReads(first.changes, tenant: tenant, user: user)
        }
        let progressReadCount = queries.count
        let events = plan.steps.filter { $0.collection == .usageEvents }.flatMap(\.changes)
        // Not on Citus, whose routed path registers and inserts in two statements it must read.
        let readsRegistry = singleNode && !events.isEmpty
        if readsRegistry { queries.append(SyncTableSQL.registered(tenant: tenant, user: user, ids: events.map(\.id))) }
        self.init(queries: queries, progressReadCount: progressReadCount, readsRegistry: readsRegistry)
    }

    /// What the reads found.
    struct Found {
        var progress: [PGResult] = []
        /// The batch's usage-event ids the registry knows (stored, or archived); nil: not read.
        var registeredUsageEvents: Set<UUID>? = nil
    }

    func found(_ results: [PGResult]) throws -> Found {
        guard results.count == queries.count else { throw PGError(kind: .client, message: "the prologue's reads returned \(results.count) results") }
        var found = Found(progress: Array(results.prefix(progressReadCount)))
        if readsRegistry, let registry = results.last {
            found.registeredUsageEvents = Set(try registry.rows.map { try $0.decode("id", as: UUID.self) })
        }
        return found
    }
}
