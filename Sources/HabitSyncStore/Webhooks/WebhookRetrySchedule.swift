/// When a failed webhook delivery is tried again, and how long an endpoint that keeps failing
/// rests: doubling from `base`, capped. Pure, so the schedule is tested whole.
public struct WebhookRetrySchedule: Sendable, Equatable {
    /// The wait after a first failure.
    public var base: Duration
    /// The longest wait between two attempts of one delivery.
    public var maximumDelay: Duration
    /// The longest an endpoint rests after failures in a row.
    public var maximumEndpointPause: Duration

    public init(base: Duration = .seconds(5), maximumDelay: Duration = .seconds(3600), maximumEndpointPause: Duration = .seconds(300)) {
        self.base = base
        self.maximumDelay = maximumDelay
        self.maximumEndpointPause = maximumEndpointPause
    }

    /// After attempt `attempt` (1 for the first) failed.
    public func delay(afterAttempt attempt: Int) -> Duration {
        doubled(times: attempt - 1, cap: maximumDelay)
    }

    /// After `failures` attempts in a row to one endpoint failed.
    public func endpointPause(afterFailures failures: Int) -> Duration {
        doubled(times: failures - 1, cap: maximumEndpointPause)
    }

    private func doubled(times: Int, cap: Duration) -> Duration {
        var delay = base
        for _ in 0..<max(0, min(times, 62)) {
            delay *= 2
            if delay >= cap { return cap }
        }
        return min(delay, cap)
    }

    /// How long a delivery that keeps failing is tried, from its first attempt to its last.
    public func span(attempts: Int) -> Duration {
        (1..<max(1, attempts)).reduce(Duration.zero) { $0 + delay(afterAttempt: $1) }
    }
}
