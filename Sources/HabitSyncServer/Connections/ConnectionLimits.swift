import NIOCore

/// How long the HTTP channel waits for a client, and how many connections it keeps open
/// (`docs/operations.md`, "Slow clients"). A client that sends too slowly is cut off; it never
/// holds memory, a connection slot or a push's turn for longer than these allow.
public struct ConnectionLimits: Sendable, Equatable {
    /// A new connection must deliver a whole request head within this.
    public var headerTimeout: Duration = .seconds(10)
    /// After a response, the next request head must arrive in full within this (keep-alive idle).
    public var keepAliveTimeout: Duration = .seconds(60)
    /// Most time a request body may take, counting only time the server was waiting for its bytes.
    public var bodyTimeout: Duration = .seconds(60)
    /// After `bodyGrace`, a body must have arrived at this many bytes a second on average.
    public var bodyMinimumBytesPerSecond: Int = 8192
    public var bodyGrace: Duration = .seconds(10)
    /// Open HTTP connections. At the cap, the connection idle the longest (waiting for a request)
    /// is closed to make room; with none idle, the new one is closed at once, so the accept loop
    /// never stalls on exhausted descriptors.
    public var maximumConnections: Int = 10_000

    public init() {}
}

extension Duration {
    var timeAmount: TimeAmount {
        let (seconds, attoseconds) = components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
