import Foundation
import HabitSyncDomain
import LibPQClient

/// Reads one pull page inside its REPEATABLE READ snapshot, once `PullStore` has checked the
/// cursor against the user's state: the phases of a first sync (docs/protocol.md, "A first
/// sync in phases") and the pulls after it. Every page it returns is in ascending versions.
struct PullPageReader {
    typealias Page = PullStore.Page
    typealias Progress = PullStore.Progress

    let connection: PGConnection
    let tenant: UUID
    let user: String
    let collections: [SyncCollection]
    let window: LocalDate?
    let limit: Int
    /// The user's counter as this snapshot sees it.
    let counter: Int64
    /// A first sync's counter when it began: tombstones at or below it are skipped. Nil after.
    let initialFloor: Int64?
    let epoch: SyncEpoch?
    /// `userState`'s digests text, for the last page.
    let storedDigests: String?

    private var filter: UInt32 { PullCursor.filter(collections) }

    private func rows(after: Int64, limit: Int, _ selection: PullPageSQL.Selection) async throws -> [PGRow] {
        try await connection.query(
            PullPageSQL.page(
                collections, tenant: tenant, user: user, after: after, limit: limit, tombstoneFloor: initialFloor ?? 0, selection: selection,
                window: window)
        ).rows
    }

    private static func version(_ row: PGRow) throws -> Int64 { try row.decode("server_version", as: Int64.self) }
    private static func change(_ row: PGRow) throws -> String { try row.decode("change", as: String.self) }

    private func cursor(after version: Int64, _ phase: PullPhase, boundary: Int64 = 0, recentFrom: LocalDate? = nil, remaining: Int64 = 0, later: Int64 = 0)
        -> PullCursor
    {
        PullCursor(
            version: version, initialSyncFloor: phase == .changes ? nil : initialFloor, collections: filter, epoch: epoch, phase: phase,
            boundary: boundary, recentFrom: recentFrom, window: window, remaining: remaining, later: later)
    }

    private func more(_ changes: [String], cursor: PullCursor, _ progress: Progress) -> Page {
        Page(changes: changes, cursor: cursor, hasMore: true, epoch: epoch, digests: nil, progress: progress, window: window)
    }

    /// The last page moves the cursor to the user's counter as this snapshot saw it:
    /// everything of these collections up to it has been delivered, and versions that were
    /// skipped (tombstones, purged rows, other collections) are passed. The cursor is bound to
    /// its collections, so it can never skip another filter's changes.
    private func lastPage(_ changes: [String], after last: Int64, ending phase: PullPhase) async throws -> Page {
        var digests = PullStore.parseDigests(storedDigests, of: collections)
        if let window, let query = PullPageSQL.windowDigests(collections, tenant: tenant, user: user, window: window) {
            for row in try await connection.query(query).rows {
                guard let collection = SyncCollection(rawValue: try row.decode("collection", as: String.self)) else { continue }
                digests[collection] = RecordDigest(count: try row.decode("n", as: Int64.self), hash: UInt64(bitPattern: try row.decode("xor", as: Int64.self)))
            }
        }
        return Page(
            changes: changes, cursor: cursor(after: max(last, counter), .changes), hasMore: false, epoch: epoch, digests: digests,
            progress: Progress(phase: phase, remaining: 0, later: 0), window: window)
    }

    /// A first sync's main screen (`previous` nil on its first page): sized once as it begins,
    /// then its pages; the page that ends it starts the history in its remaining room.
    func recent(after previous: PullCursor?, today: LocalDate) async throws -> Page {
        let since = previous?.version ?? 0
        let recentFrom = previous?.recentFrom ?? DatedHistory.recentFrom(today: today)
        var remaining = previous?.remaining ?? 0, later = previous?.later ?? 0
        if previous == nil { (remaining, later) = try await firstSyncSize(recentFrom: recentFrom) }
        let recent = try await rows(after: since, limit: limit + 1, .recent(from: recentFrom))
        if recent.count > limit {
            let page = recent.prefix(limit)
            remaining = max(0, remaining - Int64(limit))
            return more(
                try page.map(Self.change), cursor: cursor(after: try page.last.map(Self.version) ?? since, .recent, recentFrom: recentFrom, remaining: remaining, later: later),
                Progress(phase: .recent, remaining: remaining, later: later))
        }
        // The recent phase ends in this snapshot (its `counter` is the boundary); the history
        // starts in the rest of the page, from the first version. Nothing was written above
        // the boundary in this snapshot, so only its older part can come.
        let room = limit - recent.count
        let history = try await rows(after: 0, limit: room + 1, .history(recentFrom: recentFrom, boundary: counter))
        // In ascending versions, as every page: no record is in both parts.
        let changes = try (recent + history.prefix(room)).map { (try Self.version($0), try Self.change($0)) }.sorted { $0.0 < $1.0 }.map(\.1)
        guard history.count > room else { return try await lastPage(changes, after: counter, ending: .history) }
        let left = max(0, later - Int64(room))
        return more(
            changes, cursor: cursor(after: try history.prefix(room).last.map(Self.version) ?? 0, .history, boundary: counter, recentFrom: recentFrom, remaining: left),
            Progress(phase: .history, remaining: left, later: 0))
    }

    /// What the recent phase will send (`remaining`) and the history after it (`later`),
    /// counted once as a first sync begins. A digested dated collection's history is its live
    /// count (the digest) less its recent records; usage events, and any inside a window, are
    /// counted.
    private func firstSyncSize(recentFrom: LocalDate) async throws -> (remaining: Int64, later: Int64) {
        let digests = PullStore.parseDigests(storedDigests, of: collections)
        let counted = { (collection: SyncCollection) in window != nil || digests[collection] == nil }
        let sizes = try await connection.query(
            PullPageSQL.firstSyncSize(collections, tenant: tenant, user: user, recentFrom: recentFrom, window: window, countHistory: counted)
        ).rows
        var remaining: Int64 = 0, later: Int64 = 0
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
        return (remaining, later)
    }

    /// The rest of a first sync after its main screen. First the older records up to the
    /// boundary, read only where there are any (the dated collections; their usage events'
    /// months pruned by time); a cursor at or past the boundary has sent them all. Then every
    /// record written above the boundary, as the pulls after a first sync read them. Both in
    /// ascending versions, the older all at or below the boundary: the page ascends.
    func history(after previous: PullCursor, recentFrom: LocalDate) async throws -> Page {
        let since = previous.version, boundary = previous.boundary
        let older = since < boundary ? try await rows(after: since, limit: limit + 1, .history(recentFrom: recentFrom, boundary: boundary)) : []
        let left = max(0, previous.remaining - Int64(limit))
        if older.count > limit {
            let page = older.prefix(limit)
            return more(
                try page.map(Self.change), cursor: cursor(after: try page.last.map(Self.version) ?? since, .history, boundary: boundary, recentFrom: recentFrom, remaining: left),
                Progress(phase: .history, remaining: left, later: 0))
        }
        let room = limit - older.count
        let written = try await rows(after: max(since, boundary), limit: room + 1, .all)
        let changes = try (older + written.prefix(room)).map(Self.change)
        let last = try written.prefix(room).last.map(Self.version) ?? max(since, boundary)
        guard written.count > room else { return try await lastPage(changes, after: last, ending: .history) }
        return more(
            changes, cursor: cursor(after: last, .history, boundary: boundary, recentFrom: recentFrom, remaining: left), Progress(phase: .history, remaining: left, later: 0))
    }

    /// What changed after `since`. Also a first sync begun by an earlier server (a v2/v3
    /// cursor with a floor): in version order to its end, as it began.
    func changes(after since: Int64) async throws -> Page {
        let changed = try await rows(after: since, limit: limit + 1, .all)
        let page = changed.prefix(limit)
        let last = try page.last.map(Self.version) ?? since
        guard changed.count > limit else { return try await lastPage(try page.map(Self.change), after: last, ending: .changes) }
        let next = PullCursor(version: last, initialSyncFloor: initialFloor, collections: filter, epoch: epoch, phase: initialFloor == nil ? .changes : nil, window: window)
        return more(try page.map(Self.change), cursor: next, Progress(phase: .changes, remaining: max(0, counter - last), later: 0))
    }
}
