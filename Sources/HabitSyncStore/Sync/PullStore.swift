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
            func rows(after: Int64, limit: Int, _ selection: PullPageSQL.Selection) async throws -> [PGRow] {
                try await connection.query(
                    PullPageSQL.page(
                        collections, tenant: tenant, user: user, after: after, limit: limit, tombstoneFloor: initialFloor ?? 0,
                        selection: selection, window: window)
                ).rows
            }
            func nextCursor(after version: Int64, _ phase: PullPhase, boundary: Int64 = 0, recentFrom: LocalDate? = nil, remaining: Int64 = 0, later: Int64 = 0)
                -> PullCursor
            {
                PullCursor(
                    version: version, initialSyncFloor: phase == .changes ? nil : initialFloor, collections: filter, epoch: epochs.epoch,
                    phase: phase, boundary: boundary, recentFrom: recentFrom, window: window, remaining: remaining, later: later)
            }
            // The last page moves the cursor to the user's counter as this snapshot saw it:
            // everything of these collections up to it has been delivered, and versions that
            // were skipped (tombstones, purged rows, other collections) are passed. The cursor
            // is bound to its collections, so it can never skip another filter's changes.
            func lastPage(_ changes: [String], after last: Int64, ending phase: PullPhase) async throws -> Page {
                var digests = Self.parseDigests(try state?.decodeIfPresent("digests", as: String.self), of: collections)
                if let window, let query = PullPageSQL.windowDigests(collections, tenant: tenant, user: user, window: window) {
                    for row in try await connection.query(query).rows {
                        guard let collection = SyncCollection(rawValue: try row.decode("collection", as: String.self)) else { continue }
                        digests[collection] = RecordDigest(count: try row.decode("n", as: Int64.self), hash: UInt64(bitPattern: try row.decode("xor", as: Int64.self)))
                    }
                }
                return Page(
                    changes: changes, cursor: nextCursor(after: max(last, counter), .changes), hasMore: false, epoch: epochs.epoch, digests: digests,
                    progress: Progress(phase: phase, remaining: 0, later: 0),
                    window: window)
            }
            func version(_ row: PGRow) throws -> Int64 { try row.decode("server_version", as: Int64.self) }
            func change(_ row: PGRow) throws -> String { try row.decode("change", as: String.self) }

            switch cursor == nil ? .recent : cursor?.phase ?? .changes {
            case .recent:
                let recentFrom = cursor?.recentFrom ?? DatedHistory.recentFrom(today: today)
                var remaining = cursor?.remaining ?? 0, later = cursor?.later ?? 0
                if cursor == nil {
                    // A digested dated collection's history is its live count (the digest)
                    // less its recent records; usage events, and any inside a window, are counted.
                    let digests = Self.parseDigests(try state?.decodeIfPresent("digests", as: String.self), of: collections)
                    let counted = { (collection: SyncCollection) in window != nil || digests[collection] == nil }
                    let sizes = try await connection.query(
                        PullPageSQL.firstSyncSize(collections, tenant: tenant, user: user, recentFrom: recentFrom, window: window, countHistory: counted)
                    ).rows
                    for size in sizes {
                        guard let collection = SyncCollection(rawValue: try size.decode("collection", as: String.self)) else { continue }
                        let recent = try size.decode("recent", as: Int64.self)
                        remaining += recent
                        if counted(collection) {
                            later += try size.decode("history", as: Int64.self)
                        } else if DatedHistory.dating(of: collection) != nil, let digest = digests[collection] {
                            later += max(0, digest.count - recent)
                        }
                    }
                }
                let recent = try await rows(after: since, limit: limit + 1, .recent(from: recentFrom))
                if recent.count > limit {
                    let page = recent.prefix(limit)
                    remaining = max(0, remaining - Int64(limit))
                    return Page(
                        changes: try page.map(change),
                        cursor: nextCursor(after: try page.last.map(version) ?? since, .recent, recentFrom: recentFrom, remaining: remaining, later: later),
                        hasMore: true, epoch: epochs.epoch, digests: nil, progress: Progress(phase: .recent, remaining: remaining, later: later), window: window)
                }
                // The recent phase ends in this snapshot (its `counter` is the boundary); the
                // history starts in the rest of the page, from the first version. Nothing was
                // written above the boundary in this snapshot, so only its older part can come.
                let room = limit - recent.count
                let history = try await rows(after: 0, limit: room + 1, .history(recentFrom: recentFrom, boundary: counter))
                // In ascending versions, as every page: no record is in both parts.
                let changes = try (recent + history.prefix(room)).map { (try version($0), try change($0)) }.sorted { $0.0 < $1.0 }.map(\.1)
                guard history.count > room else { return try await lastPage(changes, after: counter, ending: .history) }
                let left = max(0, later - Int64(room))
                return Page(
                    changes: changes,
                    cursor: nextCursor(after: try history.prefix(room).last.map(version) ?? 0, .history, boundary: counter, recentFrom: recentFrom, remaining: left),
                    hasMore: true, epoch: epochs.epoch, digests: nil, progress: Progress(phase: .history, remaining: left, later: 0), window: window)
            case .history:
                // A history cursor always has its first recent day (`PullCursor` parses no other).
                guard let previous = cursor, let recentFrom = previous.recentFrom else { throw Failure.cursorExpired }
                // First the older records up to the boundary, read only where there are any
                // (the dated collections; their usage events' months pruned by time); a cursor
                // at or past the boundary has sent them all. Then every record written above
                // the boundary, as the pulls after a first sync read them. Both in ascending
                // versions, the older all at or below the boundary: the page ascends.
                let older = since < previous.boundary ? try await rows(after: since, limit: limit + 1, .history(recentFrom: recentFrom, boundary: previous.boundary)) : []
                let left = { (sent: Int) in max(0, previous.remaining - Int64(sent)) }
                if older.count > limit {
                    let page = older.prefix(limit)
                    return Page(
                        changes: try page.map(change),
                        cursor: nextCursor(after: try page.last.map(version) ?? since, .history, boundary: previous.boundary, recentFrom: recentFrom, remaining: left(limit)),
                        hasMore: true, epoch: epochs.epoch, digests: nil, progress: Progress(phase: .history, remaining: left(limit), later: 0), window: window)
                }
                let room = limit - older.count
                let written = try await rows(after: max(since, previous.boundary), limit: room + 1, .all)
                let page = older + written.prefix(room)
                let last = try written.prefix(room).last.map(version) ?? max(since, previous.boundary)
                guard written.count > room else { return try await lastPage(try page.map(change), after: last, ending: .history) }
                return Page(
                    changes: try page.map(change),
                    cursor: nextCursor(after: last, .history, boundary: previous.boundary, recentFrom: recentFrom, remaining: left(limit)),
                    hasMore: true, epoch: epochs.epoch, digests: nil, progress: Progress(phase: .history, remaining: left(limit), later: 0), window: window)
            case .changes:
                // Also a first sync begun by an earlier server (a v2/v3 cursor with a floor): in
                // version order to its end, as it began.
                let changed = try await rows(after: since, limit: limit + 1, .all)
                let page = changed.prefix(limit)
                let last = try page.last.map(version) ?? since
                guard changed.count > limit else { return try await lastPage(try page.map(change), after: last, ending: .changes) }
                let next = PullCursor(
                    version: last, initialSyncFloor: initialFloor, collections: filter, epoch: epochs.epoch, phase: initialFloor == nil ? .changes : nil,
                    window: window)
                return Page(
                    changes: try page.map(change), cursor: next, hasMore: true, epoch: epochs.epoch, digests: nil,
                    progress: Progress(phase: .changes, remaining: max(0, counter - last), later: 0), window: window)
            }
        }
    }
}
