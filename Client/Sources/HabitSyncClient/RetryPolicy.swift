/// How long to wait before trying a sync again: exponential in the attempt, with jitter so a
/// fleet of devices that failed together does not return together, and never sooner than the
/// server's `Retry-After`.
public struct RetryPolicy: Sendable, Equatable {
    public var baseSeconds: Double = 1
    public var maximumSeconds: Double = 300
    public var maximumAttempts = 6

    public init(baseSeconds: Double = 1, maximumSeconds: Double = 300, maximumAttempts: Int = 6) {
        self.baseSeconds = baseSeconds
        self.maximumSeconds = maximumSeconds
        self.maximumAttempts = maximumAttempts
    }

    /// The wait before retry number `attempt` (0 for the first retry); `random` in 0…1 picks
    /// the point between half and all of the exponential step.
    public func delay(attempt: Int, retryAfter: Double?, random: Double) -> Double {
        let step = min(maximumSeconds, baseSeconds * Double(1 << min(max(attempt, 0), 30)))
        let jittered = step * (0.5 + 0.5 * min(max(random, 0), 1))
        return max(retryAfter ?? 0, jittered)
    }
}
