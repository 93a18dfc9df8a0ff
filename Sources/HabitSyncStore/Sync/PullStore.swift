import Foundation
import HabitSyncAuth
import HabitSyncDomain
import LibPQClient

/// Reads what changed for a user since a cursor: one REPEATABLE READ snapshot across all
/// collections, in ascending `serverVersion`, rendered as wire JSON by PostgreSQL.
public struct PullStore: Sendable {
    public let pool: PGPool
    /// Where each user's transaction runs (on Citus, the node holding the user).
    public let pools: UserPools
    public let statementTimeout: Duration

    public init(pool: PGPool, statementTimeout: Duration = .seconds(5), pools: UserPools? = nil) {
        self.pool = pool
        self.pools = pools ?? UserPools(single: pool)
        self.statementTimeout = statementTimeout
    }

    public struct Page: Sendable {
        /// The changes, each a JSON object rendered by PostgreSQL.
        public let changes: [String]
        public let cursor: PullCursor
        public let hasMore: Bool
        /// The epoch the device syncs in; nil only when the stored epoch is not one
        /// `SyncEpoch` can read (edited by hand: the server's own never are), and the page
        /// then carries none.
        public let epoch: SyncEpoch?
        /// On the last page: the user's live records per pulled collection as of the page's
        /// snapshot (docs/protocol.md, "Digests"); usageEvents has none. With a window, those
        /// of the dated collections count the records inside it.
        public let digests: [SyncCollection: RecordDigest]?
        public let progress: Progress
        /// The window the page was cut to (`historyFrom`), echoed.
        public let window: LocalDate?
    }

    /// How far a pull has come (docs/protocol.md, "A first sync in phases").
    public struct Progress: Sendable, Equatable {
        /// The latest phase this page reaches: every record of the phases before it has been
        /// sent once this page is stored.
        public let phase: PullPhase
        /// About how many records are still to come in `phase` after this page: counted as a
        /// first sync begins and counted down, so writes made since are not in it; in the
        /// `changes` phase, the versions still ahead (at least the records).
        public let remaining: Int64
        /// About how many the phases after `phase` will send.
        public let later: Int64
    }

    public enum Failure: Error, Sendable, Equatable {
        /// The cursor is older than the tombstone purge horizon: start over without one.
        case cursorExpired
        /// The cursor was issued for another `collections` filter.
        case cursorForOtherCollections
        /// The request's window (`historyFrom`) starts before the cursor's: the records between
        /// were never sent.
        case windowWidened
    }

    public static let pullableCollections: [SyncCollection] = SyncCollection.allCases

    /// The user's counter and purge horizon, epochs and digests (`collection:count:xor`,
    /// comma-separated), and what the derived records were computed for; no row before the
    /// user's first write, and after an erasure.
    static func userState(tenant: UUID, user: String) -> PGQuery {
        """
        SELECT u.change_counter, u.purged_through_version, u.time_zone, u.account_epoch, u.database_epoch, u.restored_through, u.account_restarted,
               (SELECT string_agg(d.key || ':' || (d.value ->> 'count') || ':' || (d.value ->> 'xor'), ',') FROM jsonb_each(u.record_digests) d) AS digests,
               g.computed_for::text AS streak_for, s.computed_for::text AS usage_for
        FROM users u
        LEFT JOIN global_streaks g ON g.tenant_id = u.tenant_id AND g.user_id = u.user_id
        LEFT JOIN usage_streaks s ON s.tenant_id = u.tenant_id AND s.user_id = u.user_id
        WHERE u.tenant_id = \(tenant) AND u.user_id = \(user)
        """
    }

    static func isErased(tenant: UUID, user: String) -> PGQuery {
        "SELECT habitsync_user_erased(\(tenant), \(user)) AS erased"
    }

    /// A user without a row is new, or was erased: refused then.
    static func refuseIfErased(_ connection: PGConnection, tenant: UUID, user: String) async throws {
        if try await connection.query(isErased(tenant: tenant, user: user)).single().decode("erased", as: Bool.self) {
            throw StoreError.erasedAccount
        }
    }

    /// Signals, from inside the read snapshot, that derived records were computed for an
    /// earlier day than the user's today (a streak can break overnight without any push).
    private struct StaleDerivedState: Error {}

    /// Recomputes the derived records in a write transaction under the user's lock.
    func refreshDerivedState(_ identity: VerifiedIdentity, now: Date) async throws {
        let scope = try RequestScope.settings(tenantID: identity.tenantID, userID: identity.userID)
        try await pools.withUserTransaction(UserKey(tenant: identity.tenantID, user: identity.userID), statementTimeout: statementTimeout, localSettings: scope) {
            connection, _ in
            let user = try await PushStore.lockLiveUser(connection, tenant: identity.tenantID, user: identity.userID).user
            let counter = try user.decode("change_counter", as: Int64.self)
            let writer = DerivedStateWriter(
                connection: connection, tenant: identity.tenantID, user: identity.userID,
                derivedRecordID: try user.decode("derived_record_id", as: UUID.self), now: now)
            let next = try await writer.recompute(nextVersion: counter + 1)
            if next - 1 > counter {
                let notice = ChangeNotice(
                    tenantID: identity.tenantID, userID: identity.userID, serverVersion: next - 1, deviceID: ServerDevice.name,
                    collections: [.globalStreak, .usageStreak, .userProgress])
                try await PushStore.moveCounter(connection, tenant: identity.tenantID, user: identity.userID, to: next - 1, notice: notice)
            }
        }
    }

    /// Refuses an erased account (`StoreError.accountErased`): for an event stream as it
    /// opens, and an export before its first byte.
    public func refuseIfErased(tenant: UUID, user: String) async throws {
        try await pools.withUserTransaction(UserKey(tenant: tenant, user: user), readOnly: true, statementTimeout: statementTimeout) { connection, _ in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            try await Self.refuseIfErased(connection, tenant: tenant, user: user)
        }
    }

    static func latestVersion(tenant: UUID, user: String) -> PGQuery {
        "SELECT change_counter, account_epoch, database_epoch, restored_through, account_restarted FROM users WHERE tenant_id = \(tenant) AND user_id = \(user)"
    }

    /// The user's newest `serverVersion` (0 before anything was stored): a device that has
    /// seen less is behind. For a reconnecting event stream: one that says it has seen more
    /// (`seen`) is from another timeline (`SyncEpochRefusal`); an erased account is refused.
    public func latestVersion(identity: VerifiedIdentity, seen: Int64?) async throws -> Int64 {
        try await pools.withUserTransaction(UserKey(tenant: identity.tenantID, user: identity.userID), readOnly: true, statementTimeout: statementTimeout) {
            connection, _ in
            try await RequestScope.set(on: connection, tenantID: identity.tenantID, userID: identity.userID)
            let state: EpochCheck.ServerState
            if let row = try await connection.query(Self.latestVersion(tenant: identity.tenantID, user: identity.userID)).rows.first {
                state = try SyncEpochRefusal.serverState(row)
            } else {
                try await Self.refuseIfErased(connection, tenant: identity.tenantID, user: identity.userID)
                state = try await SyncEpochRefusal.serverStateWithoutUser(connection)
            }
            try SyncEpochRefusal.check(device: nil, seenVersion: seen, server: state)
            return state.counter
        }
    }

    /// A page of changes after `cursor`; `window`: the device keeps dated records from that
    /// day on only (docs/protocol.md, "A rolling window").
    public func pull(
        identity: VerifiedIdentity, after cursor: PullCursor?, limit: Int, collections: [SyncCollection], window: LocalDate? = nil, now: Date = Date()
    ) async throws -> Page {
        do {
            return try await page(identity: identity, after: cursor, limit: limit, collections: collections, window: window, now: now, refreshIfStale: true)
        } catch is StaleDerivedState {
            // Rare (once per user and day): recompute, then read again from a new snapshot.
            try await refreshDerivedState(identity, now: now)
            return try await page(identity: identity, after: cursor, limit: limit, collections: collections, window: window, now: now, refreshIfStale: false)
        }
    }

    /// Collections whose digest a pull reports: all but usageEvents, whose months leave the
    /// table when maintenance archives them.
    public static let digestedCollections = SyncCollection.allCases.filter { $0 != .usageEvents }

    /// `collection:count:xor,…` as `userState` renders `users.record_digests`; collections
    /// without a live record have no entry (count 0, hash 0).
    static func parseDigests(_ text: String?, of collections: [SyncCollection]) -> [SyncCollection: RecordDigest] {
        var digests = Dictionary(uniqueKeysWithValues: collections.filter(digestedCollections.contains).map { ($0, RecordDigest()) })
        for entry in (text ?? "").split(separator: ",") {
            let parts = entry.split(separator: ":")
            guard parts.count == 3, let collection = SyncCollection(rawValue: String(parts[0])), digests[collection] != nil,
                let count = Int64(parts[1]), let xor = Int64(parts[2])
            else { continue }
            digests[collection] = RecordDigest(count: count, hash: UInt64(bitPattern: xor))
        }
        return digests
    }

    private func page(
        identity: VerifiedIdentity, after cursor: PullCursor?, limit: Int, collections: [SyncCollection], window: LocalDate?, now: Date, refreshIfStale: Bool
    ) async throws -> Page {
        let since = cursor?.version ?? 0
        let filter = PullCursor.filter(collections)
        if let cursor, cursor.collections != nil, cursor.collections != filter { throw Failure.cursorForOtherCollections }
        // Records before the cursor's window were never sent: an earlier window would miss them.
        if let held = cursor?.window, window.map({ $0 < held }) ?? true { throw Failure.windowWidened }
        let scope = try RequestScope.settings(tenantID: identity.tenantID, userID: identity.userID)
        return try await pools.withUserTransaction(
            UserKey(tenant: identity.tenantID, user: identity.userID), isolation: .repeatableRead, readOnly: true, statementTimeout: statementTimeout,
            localSettings: scope
        ) { connection, _ in
            let tenant = identity.tenantID, user = identity.userID
            let state = try await connection.query(Self.userState(tenant: tenant, user: user)).rows.first
            if state == nil { try await Self.refuseIfErased(connection, tenant: tenant, user: user) }
            let zone = try state.flatMap { TimeZone(identifier: try $0.decode("time_zone", as: String.self)) } ?? .gmt
            let today = LocalDate(now, in: zone)
            if refreshIfStale, let state {
                let computed = [try state.decodeIfPresent("streak_for", as: String.self), try state.decodeIfPresent("usage_for", as: String.self)]
                if computed.compactMap({ $0 }).compactMap(LocalDate.init).contains(where: { $0 < today }) { throw StaleDerivedState() }
            }
            let counter = try state?.decode("change_counter", as: Int64.self) ?? 0
            let horizon = try state?.decode("purged_through_version", as: Int64.self) ?? 0
            let epochs: EpochCheck.ServerState
            if let state { epochs = try SyncEpochRefusal.serverState(state) } else { epochs = try await SyncEpochRefusal.serverStateWithoutUser(connection) }
            try SyncEpochRefusal.check(device: cursor?.epoch, seenVersion: cursor?.seenVersion, server: epochs)
            // A first sync (no cursor, or one of its own pages) needs the tombstones of records
            // deleted after it began only: it is below the horizon only when a purge reached those.
            let initialFloor: Int64? = cursor == nil ? counter : cursor?.initialSyncFloor
            if let cursor {
                if let floor = cursor.initialSyncFloor {
                    if horizon > floor { throw Failure.cursorExpired }
                } else if cursor.version < horizon {
                    throw Failure.cursorExpired
                }
            }
            let reader = PullPageReader(
                connection: connection, tenant: tenant, user: user, collections: collections, window: window, limit: limit, counter: counter,
                initialFloor: initialFloor, epoch: epochs.epoch, storedDigests: try state?.decodeIfPresent("digests", as: String.self))
            switch cursor == nil ? .recent : cursor?.phase ?? .changes {
            case .recent:
                return try await reader.recent(after: cursor, today: today)
            case .history:
                // A history cursor always has its first recent day (`PullCursor` parses no other).
                guard let cursor, let recentFrom = cursor.recentFrom else { throw Failure.cursorExpired }
                return try await reader.history(after: cursor, recentFrom: recentFrom)
            case .changes:
                return try await reader.changes(after: since)
            }
        }
    }
}
