import Foundation
import HabitSyncDomain
import LibPQClient

/// `GET /v1/account/export` and `user export`: everything the server holds for a user, as one
/// JSON document written in pieces, so memory holds one page whatever the account's size:
///
///     {"format": "habitsync-export", "formatVersion": 1, "tenantId", "userId", "exportedAt",
///      "changes": [pull-format changes of every collection, tombstones and archived usage events included],
///      "conflicts": [...], "legacyImports": [...], "dataMigrations": [...], "devices": [...], "pushBatches": [...],
///      "counts": {section: entries}, "complete": true}
///
/// Each page is read in a transaction of its own, so a slow reader holds no connection while
/// it reads; a record changed during the export can then appear twice, the later one current
/// (as in a pull). Each page's transaction also looks for the account's erasure marker, which
/// an erasure commits before it deletes anything: a page that sees no marker sees every row,
/// and an export that meets one stops there, without its trailer. Only a whole document ends
/// with `"complete": true` and the counts it holds, which readers check.
extension AccountStore {
    public struct ExportSummary: Sendable, Equatable {
        /// Entries per section; `changes` also by collection in `collections`.
        public var sections: [String: Int] = [:]
        public var collections: [String: Int] = [:]
    }

    /// One section of the export: its JSON objects in key order, one page after `after`.
    /// Rows are `(key text, item text)`.
    struct Section: Sendable {
        let name: String
        let page: @Sendable (_ tenant: UUID, _ user: String, _ after: String?, _ limit: Int) -> PGQuery
    }

    static let nilUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    static let exportedCollections: [SyncCollection] = SyncCollection.allCases

    /// The user's changes of every collection after a version, tombstones included.
    static func changesPage(tenant: UUID, user: String, after: String?, limit: Int) -> PGQuery {
        let since = after.flatMap { Int64($0) } ?? 0
        let page = PullPageSQL.page(exportedCollections, tenant: tenant, user: user, after: since, limit: limit, tombstoneFloor: 0, selection: .all, window: nil)
        return "SELECT server_version::text AS key, change AS item FROM (\(page)) p"
    }

    /// Archived usage-event partitions (detached by maintenance): they hold events pulls no
    /// longer read. The request role cannot read them: `habitsync_archived_usage_events`
    /// (migration 0013) does, in transactions run as the login role (`.login`), which is what
    /// Citus reads the workers' archived shards as.
    static let archivedUsageEventPartitions: PGQuery = """
        SELECT t.relation::oid::int8 AS partition
        FROM habitsync_user_tables() t JOIN pg_class c ON c.oid = t.relation JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'archive' AND c.relname LIKE 'usage\\_events\\_%'
        ORDER BY c.relname
        """

    static func archivedUsageEventsPage(_ partition: Int64, tenant: UUID, user: String, after: String?, limit: Int) -> PGQuery {
        """
        SELECT e.server_version::text AS key, \(WireChangeSQL.change(.usageEvents, alias: "e"))::text AS item
        FROM habitsync_archived_usage_events(\(tenant), \(user), \(partition)::oid::regclass, \(after.flatMap { Int64($0) } ?? 0), \(limit)::int4) e
        """
    }

    static let otherSections: [Section] = [
        Section(name: "conflicts") { tenant, user, after, limit in
            """
            SELECT c.id::text AS key, (to_jsonb(c) - 'tenant_id' - 'user_id')::text AS item FROM conflict_log c
            WHERE c.tenant_id = \(tenant) AND c.user_id = \(user) AND c.id > \(after.flatMap { Int64($0) } ?? 0)
            ORDER BY c.id LIMIT \(limit)
            """
        },
        Section(name: "legacyImports") { tenant, user, after, limit in
            // Keys are "<sha256>:<position>".
            let parts = after?.split(separator: ":").map(String.init) ?? []
            let sha = parts.first ?? "", position = parts.count == 2 ? Int(parts[1]) ?? -1 : -1
            return """
                SELECT l.source_sha256 || ':' || l.position AS key, (to_jsonb(l) - 'tenant_id' - 'user_id')::text AS item
                FROM legacy_import_archive l
                WHERE l.tenant_id = \(tenant) AND l.user_id = \(user) AND (l.source_sha256, l.position) > (\(sha), \(position))
                ORDER BY l.source_sha256, l.position LIMIT \(limit)
                """
        },
        Section(name: "dataMigrations") { tenant, user, after, limit in
            """
            SELECT m.name AS key, (to_jsonb(m) - 'tenant_id' - 'user_id')::text AS item FROM data_migrations m
            WHERE m.tenant_id = \(tenant) AND m.user_id = \(user) AND m.name > \(after ?? "")
            ORDER BY m.name LIMIT \(limit)
            """
        },
        Section(name: "devices") { tenant, user, after, limit in
            """
            SELECT d.device_id AS key, (to_jsonb(d) - 'tenant_id' - 'user_id')::text AS item FROM devices d
            WHERE d.tenant_id = \(tenant) AND d.user_id = \(user) AND d.device_id > \(after ?? "")
            ORDER BY d.device_id LIMIT \(limit)
            """
        },
        Section(name: "pushBatches") { tenant, user, after, limit in
            // Keys are "<device id>\u{1}<batch id>" (a device id has no control characters).
            let parts = after?.split(separator: "\u{1}", omittingEmptySubsequences: false).map(String.init) ?? []
            let device = parts.first ?? "", batch = parts.count == 2 ? UUID(uuidString: parts[1]) ?? Self.nilUUID : Self.nilUUID
            return """
                SELECT b.device_id || chr(1) || b.batch_id::text AS key,
                       jsonb_build_object('deviceId', b.device_id, 'batchId', b.batch_id, 'createdAt', habitsync_wire_time(b.created_at),
                                          'responseStatus', b.response_status, 'response', convert_from(b.response_body, 'UTF8')::jsonb)::text AS item
                FROM push_batches b
                WHERE b.tenant_id = \(tenant) AND b.user_id = \(user) AND (b.device_id, b.batch_id) > (\(device), \(batch))
                ORDER BY b.device_id, b.batch_id LIMIT \(limit)
                """
        },
    ]

    /// Refuses the export of an erased account before anything is written.
    public func checkExportable(tenant: UUID, user: String) async throws {
        try await PullStore(pool: pool, statementTimeout: statementTimeout).refuseIfErased(tenant: tenant, user: user)
    }

    /// Writes the export in pieces to `write`; returns what it wrote.
    @discardableResult
    public func export(tenant: UUID, user: String, now: Date = Date(), write: (String) async throws -> Void) async throws -> ExportSummary {
        var summary = ExportSummary()
        try await write(
            "{\"format\":\"habitsync-export\",\"formatVersion\":1,\"tenantId\":\"\(tenant.uuidString.lowercased())\",\"userId\":\(JSONText.string(user)),\"exportedAt\":\"\(WireTime.format(now))\",\"changes\":["
        )
        var first = true
        func emit(_ items: [String]) async throws {
            guard !items.isEmpty else { return }
            try await write((first ? "" : ",") + items.joined(separator: ","))
            first = false
        }
        var count = try await pages(tenant: tenant, user: user, { Self.changesPage(tenant: $0, user: $1, after: $2, limit: $3) }) { items in
            for item in items {
                if let collection = Self.collectionName(item) { summary.collections[collection, default: 0] += 1 }
            }
            try await emit(items)
        }
        let archived = try await pool.withTransaction(readOnly: true, statementTimeout: statementTimeout) { connection in
            try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
            try await PullStore.refuseIfErased(connection, tenant: tenant, user: user)
            return try await connection.query(Self.archivedUsageEventPartitions).rows.map { try $0.decode("partition", as: Int64.self) }
        }
        for partition in archived {
            count += try await pages(tenant: tenant, user: user, role: .login, { Self.archivedUsageEventsPage(partition, tenant: $0, user: $1, after: $2, limit: $3) }) { items in
                summary.collections[SyncCollection.usageEvents.rawValue, default: 0] += items.count
                try await emit(items)
            }
        }
        summary.sections["changes"] = count
        for section in Self.otherSections {
            try await write("],\"\(section.name)\":[")
            first = true
            summary.sections[section.name] = try await pages(tenant: tenant, user: user, section.page) { try await emit($0) }
        }
        try await write("],\"counts\":{\(summary.sections.keys.sorted().map { "\"\($0)\":\(summary.sections[$0] ?? 0)" }.joined(separator: ","))},\"complete\":true}\n")
        return summary
    }

    /// Reads one section page by page, each in its own read-only transaction; returns the count.
    private func pages(
        tenant: UUID, user: String, role: TransactionRole = .configured, _ page: (UUID, String, String?, Int) -> PGQuery,
        each: ([String]) async throws -> Void
    ) async throws -> Int {
        var after: String?
        var total = 0
        while true {
            let query = page(tenant, user, after, exportPageSize)
            let rows = try await pool.withTransaction(readOnly: true, statementTimeout: statementTimeout, role: role) { connection in
                try await RequestScope.set(on: connection, tenantID: tenant, userID: user)
                try await PullStore.refuseIfErased(connection, tenant: tenant, user: user)
                return try await connection.query(query).rows.map { (key: try $0.decode("key", as: String.self), item: try $0.decode("item", as: String.self)) }
            }
            try await each(rows.map(\.item))
            total += rows.count
            guard rows.count == exportPageSize, let last = rows.last else { return total }
            after = last.key
        }
    }

    /// The `collection` of a change rendered by `WireChangeSQL.change` (its first member).
    static func collectionName(_ change: String) -> String? {
        let prefix = "{\"collection\":\""
        guard change.hasPrefix(prefix) else { return nil }
        let rest = change.dropFirst(prefix.count)
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}
