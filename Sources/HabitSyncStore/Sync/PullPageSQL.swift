import Foundation
import HabitSyncDomain
import LibPQClient

/// The statements of a pull page: which records a page sends, how many a first sync has
/// left, and a windowed device's digests (docs/protocol.md, "Pull", "A first sync in
/// phases", "A rolling window"). Dated records are chosen by `DatedHistory`'s rules.
enum PullPageSQL {
    /// Which records of the version range a page may send.
    enum Selection: Sendable {
        /// Every record (a pull after the first sync).
        case all
        /// The main screen's: every record of a collection that is not history, and dated
        /// records of `from` on.
        case recent(from: LocalDate)
        /// The older part of a first sync's history: dated records before the first recent day
        /// and tombstones without a date, at or below `boundary` (the user's counter when the
        /// recent phase ended). Only dated collections have any; what was written above the
        /// boundary, the history phase sends afterwards as `all`.
        case history(recentFrom: LocalDate, boundary: Int64)
    }

    /// The columns that date a collection's records (`DatedHistory.Dating`): its day where
    /// it has one, else its instant.
    static func datingColumns(_ collection: SyncCollection) -> (day: PGFragment?, time: PGFragment?)? {
        switch collection {
        case .dailyProgress: ("date", nil)
        case .xpTransactions: ("date", "occurred_at")
        case .usageEvents: (nil, "occurred_at")
        case .focusSessions: (nil, "start_time")
        default: nil
        }
    }

    /// Whether a record is dated on or after `date`: true or false for a dated record, NULL
    /// for one without a date (a tombstone), as SQL's comparisons with NULL are. Nil for a
    /// collection that is not history.
    static func onOrAfter(_ collection: SyncCollection, _ date: LocalDate) -> PGQuery? {
        switch datingColumns(collection) {
        case (let day?, nil)?: return "h.\(day) >= \(date)"
        case (nil, let time?)?: return "h.\(time) >= \(DatedHistory.earliestInstant(of: date))"
        case (let day?, let time?)?:
            return "(h.\(day) >= \(date) OR (h.\(day) IS NULL AND h.\(time) >= \(DatedHistory.earliestInstant(of: date))))"
        default: return nil
        }
    }

    /// A record without any date (a tombstone of a dated collection).
    static func undated(_ collection: SyncCollection) -> PGQuery? {
        guard let (day, time) = datingColumns(collection) else { return nil }
        return [day, time].compactMap { $0 }.map { column -> PGQuery in "h.\(column) IS NULL" }.joined(separator: " AND ")
    }

    /// Whether a record is dated before `date` or has no date. Usage events always have their
    /// time (never deleted), so theirs is the plain comparison their monthly partitions are
    /// pruned by.
    static func before(_ collection: SyncCollection, _ date: LocalDate) -> PGQuery? {
        if collection == .usageEvents { return "h.occurred_at < \(DatedHistory.earliestInstant(of: date))" }
        return onOrAfter(collection, date).map { "(\($0)) IS NOT TRUE" }
    }

    /// The condition of a collection's branch; nil where the selection has none of its records
    /// (a collection that is not history, in the history).
    static func condition(_ collection: SyncCollection, _ selection: Selection, window: LocalDate?) -> PGQuery? {
        var condition: PGQuery
        switch selection {
        case .all:
            condition = ""
        case .recent(let from):
            condition = onOrAfter(collection, from).map { " AND \($0)" } ?? ""
        case .history(let recentFrom, let boundary):
            guard let older = before(collection, recentFrom) else { return nil }
            condition = " AND h.server_version <= \(boundary) AND \(older)"
        }
        if let window, let dated = onOrAfter(collection, window), let undated = undated(collection) {
            condition = "\(condition) AND (\(dated) OR \(undated))"
        }
        return condition
    }

    /// `(server_version >= 0) IS TRUE` (always true): the predicate of the partial indexes by
    /// day (migrations 0041, 0044), stated by the reads that pick rows by their dates so that
    /// those indexes serve them. PostgreSQL proves it only from the same clause, so no other
    /// statement can choose them: not a page in version order, whose `server_version > 0`
    /// would imply a plain `server_version >= 0`.
    static let byDays: PGQuery = " AND (h.server_version >= 0) IS TRUE"

    /// One branch per collection the selection reads, each cut to `limit`, merged in version
    /// order and cut again (no row where it reads none).
    /// `server_version > 0` (always true) is the predicate of the partial pull index of
    /// daily_progress (migration 0028): stated where the version range picks the rows; where
    /// the recent days do, the indexes by day are named instead (`byDays`).
    /// Tombstones at or below `tombstoneFloor` are left out: a first sync skips those of
    /// records deleted before it began (the device never had them); 0 includes every one.
    static func page(
        _ collections: [SyncCollection], tenant: UUID, user: String, after since: Int64, limit: Int, tombstoneFloor: Int64,
        selection: Selection, window: LocalDate?
    ) -> PGQuery {
        let branches = collections.compactMap { collection -> PGQuery? in
            guard let condition = condition(collection, selection, window: window) else { return nil }
            var versionRange: PGQuery = "h.server_version > \(since)"
            if case .recent = selection, datingColumns(collection) != nil {
                versionRange = "\(versionRange)\(byDays)"
            } else {
                versionRange = "\(versionRange) AND h.server_version > 0"
            }
            return """
                (SELECT h.server_version, \(WireChangeSQL.change(collection, alias: "h"))::text AS change
                 FROM \(PGFragment.identifier(collection.table)) h
                 WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND \(versionRange)
                   AND (h.deleted_at IS NULL OR h.server_version > \(tombstoneFloor))\(condition)
                 ORDER BY h.server_version LIMIT \(limit))
                """
        }
        guard !branches.isEmpty else { return "SELECT NULL::bigint AS server_version, NULL::text AS change WHERE false" }
        return "SELECT server_version, change FROM (\(branches.joined(separator: "\nUNION ALL\n"))) page ORDER BY server_version LIMIT \(limit)"
    }

    /// What a first sync will send, as it begins, per collection: its live records of the
    /// recent phase, and its dated live records before them (inside the window) where
    /// `countHistory` says so — the others' the caller takes from the user's digests (exact
    /// live counts, kept by triggers) without reading the history. Counted once per first
    /// sync, each through the index of the days it counts; later pages count down from it.
    static func firstSyncSize(
        _ collections: [SyncCollection], tenant: UUID, user: String, recentFrom: LocalDate, window: LocalDate?,
        countHistory: (SyncCollection) -> Bool
    ) -> PGQuery {
        func count(_ collection: SyncCollection, _ condition: PGQuery) -> PGQuery {
            """
            (SELECT count(*) FROM \(PGFragment.identifier(collection.table)) h
             WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.deleted_at IS NULL\(condition))
            """
        }
        return collections.map { collection -> PGQuery in
            let recent = count(collection, "\(datingColumns(collection) == nil ? "" : byDays)\(condition(collection, .recent(from: recentFrom), window: window) ?? "")")
            var history: PGQuery = "0"
            if countHistory(collection), let older = before(collection, recentFrom) {
                history = count(collection, "\(byDays) AND \(older)\(condition(collection, .all, window: window) ?? "")")
            }
            return "SELECT \(collection.rawValue)::text AS collection, \(recent) AS recent, \(history) AS history"
        }.joined(separator: "\nUNION ALL\n")
    }

    /// A windowed device's digests of the dated collections it pulls (not usageEvents, which
    /// has none): the live records inside the window, with the terms of "Digests". Read
    /// through the days' indexes: the cost grows with the window, not with the history.
    static func windowDigests(_ collections: [SyncCollection], tenant: UUID, user: String, window: LocalDate) -> PGQuery? {
        let branches = collections.filter { PullStore.digestedCollections.contains($0) }.compactMap { collection -> PGQuery? in
            guard let dated = onOrAfter(collection, window) else { return nil }
            return """
                SELECT \(collection.rawValue)::text AS collection, count(*) AS n,
                       coalesce(bit_xor(habitsync_digest_term(h.id, h.server_version)), 0) AS xor
                FROM \(PGFragment.identifier(collection.table)) h
                WHERE h.tenant_id = \(tenant) AND h.user_id = \(user) AND h.deleted_at IS NULL\(byDays) AND \(dated)
                """
        }
        return branches.isEmpty ? nil : branches.joined(separator: "\nUNION ALL\n")
    }
}
