/// A token bucket: `rate` tokens a second, holding at most `capacity` (one second's worth: a
/// burst of a second is allowed, a sustained rate above `rate` is not). Pure: the caller
/// passes the time, in seconds of a monotonic clock.
public struct TokenBucket: Sendable, Equatable {
    public let rate: Double
    public let capacity: Double
    public private(set) var tokens: Double
    private var updatedAt: Double

    /// Full at `now`. `rate` must be positive (a limit is at least 1 a second, shared among at
    /// most as many replicas as the limit allows down to a fraction).
    public init(rate: Double, now: Double) {
        self.rate = max(rate, .leastNormalMagnitude)
        capacity = max(rate, 1)
        tokens = capacity
        updatedAt = now
    }

    private mutating func refill(_ now: Double) {
        guard now > updatedAt else { return }
        tokens = min(capacity, tokens + (now - updatedAt) * rate)
        updatedAt = now
    }

    /// Takes `count` tokens if the bucket holds them; else takes none and returns how many
    /// seconds until it would. A request larger than the
    /// bucket can ever hold is admitted once the bucket is full, leaving it in debt: the
    /// tenant's next requests wait for what it took.
    public mutating func take(_ count: Double, now: Double) -> Double? {
        refill(now)
        let needed = min(count, capacity)
        guard tokens >= needed else { return (needed - tokens) / rate }
        tokens -= count
        return nil
    }

    /// Gives back what `take` took, for a request a later check refused.
    public mutating func giveBack(_ count: Double) {
        tokens = min(capacity, tokens + count)
    }
}
