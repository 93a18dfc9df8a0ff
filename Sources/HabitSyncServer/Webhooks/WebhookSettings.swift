import GuardedFetch
import HabitSyncStore

/// How this replica delivers webhooks (docs/operations.md, "Webhooks").
public struct WebhookSettings: Sendable, Equatable {
    /// Whether this replica delivers (on Citus it never does: deliveries are not written there
    /// yet, deploy/README.md).
    public var enabled = true
    /// What a delivery's POST may reach and how long it may take: HTTPS to public addresses,
    /// unless the operator allows private ones (or, for tests, plain HTTP to loopback).
    public var fetch = FetchPolicy(timeout: .seconds(10), maximumBytes: 64 * 1024)
    /// The waits between attempts.
    public var schedule = WebhookRetrySchedule()
    /// How long a finished delivery is kept (and the longest one waits before it dies).
    public var retention: Duration = .seconds(7 * 24 * 3600)
    /// How often the deliverer looks for due deliveries when it found none.
    public var pollInterval: Duration = .seconds(1)
    /// Deliveries claimed, and sent at once, per round.
    public var concurrency = 16
    /// How often the retention is applied.
    public var pruneInterval: Duration = .seconds(300)

    public init() {}

    /// A claimed delivery is leased this long: past it, another replica may take it (this
    /// one died while sending).
    var lease: Duration { fetch.timeout * 2 + .seconds(30) }
}
