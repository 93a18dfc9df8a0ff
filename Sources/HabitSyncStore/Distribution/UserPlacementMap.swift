import LibPQClient

/// Where each user's rows live on a Citus cluster: the hash ranges of `users`' shards and the
/// node that holds each. Every other table with a `user_id` is co-located with `users`
/// (`habitsync_distribute`), so one user's rows all live on that node.
public struct UserPlacementMap: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        let lowest: Int32
        let highest: Int32
        let node: PGNodeAddress
    }

    /// Sorted by `lowest`; Citus' hash ranges do not overlap and together cover every value.
    let ranges: [Range]

    /// Every node that holds a shard of `users` (the change feed asks on every tick).
    public let nodes: Set<PGNodeAddress>

    init(ranges: [Range]) {
        self.ranges = ranges
        nodes = Set(ranges.map(\.node))
    }

    /// The node holding `user`'s shard group; nil when no range holds its hash (a map read
    /// while shards were being created).
    public func node(for user: UserKey) -> PGNodeAddress? {
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
                return range.node
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

    /// Reads the map; nil when the database is not a Citus coordinator whose `users` is
    /// distributed.
    static func read(_ connection: PGConnection) async throws -> UserPlacementMap? {
        guard try await connection.query(DistributionStore.hasWorkerCatalog).single().decode("citus", as: Bool.self) else { return nil }
        var ranges: [Range] = []
        for row in try await connection.query(query).rows {
            let range = Range(
                lowest: try row.decode("lowest"), highest: try row.decode("highest"),
                node: PGNodeAddress(host: try row.decode("nodename"), port: try row.decode("nodeport")))
            // A shard with two placements (a move's last instant) keeps its first.
            if ranges.last?.lowest != range.lowest { ranges.append(range) }
        }
        return ranges.isEmpty ? nil : UserPlacementMap(ranges: ranges)
    }
}
