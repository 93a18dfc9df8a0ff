import LibPQClient

/// Where each user's rows live on a Citus cluster: the hash ranges of `users`' shards and the
/// node that holds each. Every other table with a `user_id` is co-located with `users`
/// (`habitsync_distribute`), so one user's rows all live on that node.
public struct UserPlacementMap: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        let lowest: Int32
        let highest: Int32
        let node: PGNodeAddress
        /// The shard of `users` in this range: the one a transaction locks against a move.
        var usersShard: Int64 = 0
        /// Each co-located table's shard in this range, by the table's name.
        var shards: [String: String] = [:]
    }

    /// Sorted by `lowest`; Citus' hash ranges do not overlap and together cover every value.
    let ranges: [Range]

    /// Every node that holds a shard of `users` (the change feed asks on every tick).
    public let nodes: Set<PGNodeAddress>

    /// Each range's shard names, by the range's `lowest` (one object per range: it keeps the
    /// renamed statements).
    let relationNames: [Int32: PGRelationNames]

    init(ranges: [Range]) {
        self.ranges = ranges
        nodes = Set(ranges.map(\.node))
        relationNames = Dictionary(uniqueKeysWithValues: ranges.map { ($0.lowest, PGRelationNames($0.shards)) })
    }

    public static func == (left: UserPlacementMap, right: UserPlacementMap) -> Bool { left.ranges == right.ranges }

    /// Where `user`'s transactions run and the names of the user's shards there; nil as
    /// `node(for:)`.
    public func shardGroup(for user: UserKey) -> (node: PGNodeAddress, usersShard: Int64, names: PGRelationNames)? {
        guard let range = range(for: user), let names = relationNames[range.lowest], !range.shards.isEmpty else { return nil }
        return (range.node, range.usersShard, names)
    }

    /// The node holding `user`'s shard group; nil when no range holds its hash (a map read
    /// while shards were being created).
    public func node(for user: UserKey) -> PGNodeAddress? { range(for: user)?.node }

    func range(for user: UserKey) -> Range? {
        let hash = DistributionHash.of(user.user)
        var low = 0
        var high = ranges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let range = ranges[middle]
            if hash < range.lowest {
                high = middle - 1
            } else if hash > range.highest {
                low = middle + 1
            } else {
                return range
            }
        }
        return nil
    }

    /// Each shard of `users` with its hash range and the active primary node holding its
    /// placement (one per shard: the project's tables have no replicas). Read on the
    /// coordinator, whose catalog is the source every node's copy follows.
    static let query: PGQuery = """
        SELECT s.shardminvalue::int4 AS lowest, s.shardmaxvalue::int4 AS highest, n.nodename, n.nodeport
        FROM pg_dist_shard s
        JOIN pg_dist_placement p ON p.shardid = s.shardid
        JOIN pg_dist_node n ON n.groupid = p.groupid
        WHERE s.logicalrelid = 'public.users'::regclass AND n.isactive AND n.noderole = 'primary'
        ORDER BY s.shardminvalue::int4, n.nodename, n.nodeport
        """

    /// Every shard of the tables co-located with `users` (partitions aside: statements name
    /// their parent), by hash range.
    static let colocatedShards: PGQuery = """
        SELECT s.logicalrelid::regclass::text AS relation, s.shardid, s.shardminvalue::int4 AS lowest
        FROM pg_dist_shard s
        JOIN pg_dist_partition p ON p.logicalrelid = s.logicalrelid
        WHERE p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'public.users'::regclass)
          AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = s.logicalrelid)
        """

    /// The reference tables a request may read but not write (`tenants`): their one shard is on
    /// every node, current on each (Citus writes them everywhere in one transaction), so a
    /// user's transaction reads the local copy. One the request role may write
    /// (`erased_users`) is left to Citus, which writes every copy.
    static func readOnlyReferenceShards(role: String) -> PGQuery {
        """
        SELECT s.logicalrelid::regclass::text AS relation, s.shardid
        FROM pg_dist_shard s
        JOIN pg_dist_partition p ON p.logicalrelid = s.logicalrelid
        WHERE p.partmethod = 'n' AND p.repmodel = 't'
          AND has_table_privilege(\(role), s.logicalrelid, 'SELECT')
          AND NOT has_table_privilege(\(role), s.logicalrelid, 'INSERT, UPDATE, DELETE, TRUNCATE')
        """
    }

    /// Reads the map; nil when the database is not a Citus coordinator whose `users` is
    /// distributed.
    static func read(_ connection: PGConnection, requestRole: String?) async throws -> UserPlacementMap? {
        guard try await connection.query(DistributionStore.hasWorkerCatalog).single().decode("citus", as: Bool.self) else { return nil }
        var ranges: [Range] = []
        for row in try await connection.query(query).rows {
            let range = Range(
                lowest: try row.decode("lowest"), highest: try row.decode("highest"),
                node: PGNodeAddress(host: try row.decode("nodename"), port: try row.decode("nodeport")))
            // A shard with two placements (a move's last instant) keeps its first.
            if ranges.last?.lowest != range.lowest { ranges.append(range) }
        }
        var shards: [Int32: [String: String]] = [:]
        var usersShards: [Int32: Int64] = [:]
        for row in try await connection.query(colocatedShards).rows {
            let relation: String = try row.decode("relation")
            let shard: Int64 = try row.decode("shardid")
            let lowest: Int32 = try row.decode("lowest")
            shards[lowest, default: [:]][relation] = "\(relation)_\(shard)"
            if relation == "users" { usersShards[lowest] = shard }
        }
        var references: [String: String] = [:]
        if let requestRole {
            for row in try await connection.query(readOnlyReferenceShards(role: requestRole)).rows {
                let relation: String = try row.decode("relation")
                references[relation] = "\(relation)_\(try row.decode("shardid", as: Int64.self))"
            }
        }
        for index in ranges.indices {
            ranges[index].shards = (shards[ranges[index].lowest] ?? [:]).merging(references) { own, _ in own }
            ranges[index].usersShard = usersShards[ranges[index].lowest] ?? 0
        }
        return ranges.isEmpty ? nil : UserPlacementMap(ranges: ranges)
    }
}
