/// One PostgreSQL server by host and port, as a cluster's catalog names its members (a Citus
/// coordinator's `pg_dist_node`): `PGConnectionConfiguration.at(_:)` reaches it with the rest
/// of a connection string unchanged.
public struct PGNodeAddress: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }

    public static func < (lhs: PGNodeAddress, rhs: PGNodeAddress) -> Bool { (lhs.host, lhs.port) < (rhs.host, rhs.port) }
}
