/// Bounds of the realtime streams (`GET /v1/sync/events`).
public struct RealtimeLimits: Sendable {
    /// Open streams of one user (all devices) beyond which a new one is `429`.
    public var streamsPerUser = 10
    /// Open streams of this server beyond which a new one is `429`.
    public var streams = 5_000
    /// A comment line this often keeps proxies and load balancers from closing a quiet stream.
    public var heartbeat: Duration = .seconds(15)
    /// A stream is closed (with a retry hint) after this long, so connections move between
    /// replicas and nothing lives forever.
    public var maximumLifetime: Duration = .seconds(3600)
    /// … or after this long without an event.
    public var idleLifetime: Duration = .seconds(900)

    public init() {}

    /// How often streams are checked for heartbeats and lifetimes.
    var tick: Duration { max(.milliseconds(10), min(heartbeat, idleLifetime, maximumLifetime) / 4) }
}
