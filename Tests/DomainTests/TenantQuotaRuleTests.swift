import HabitSyncDomain
import Testing

/// The quota rules without I/O: a limit's text and range, and the token bucket's arithmetic.
@Suite struct TenantQuotaRuleTests {
    @Test func aLimitIsAWholeNumberInItsRangeOrNone() {
        for kind in TenantLimits.Kind.allCases {
            #expect(TenantLimits.parse("none", for: kind) == .some(nil))
            #expect(TenantLimits.parse("1", for: kind) == .some(1))
            #expect(TenantLimits.parse(String(kind.range.upperBound), for: kind) == .some(kind.range.upperBound))
            for bad in [
                "", "0", "-1", "+5", " 5", "5 ", "5\n", "5\0", "1e3", "1.0", "1e308", "0x10", "٥", "NaN", "unlimited", "None",
                String(kind.range.upperBound + 1), "99999999999999999999999", String(repeating: "9", count: 10_000),
            ] {
                #expect(TenantLimits.parse(bad, for: kind) == nil, "\(kind) took \(bad.debugDescription)")
            }
        }
        #expect(TenantLimits.Kind.pushesPerSecond.flag == "pushes-per-second")
        #expect(TenantLimits.Kind.storageRows.flag == "storage-rows")
        #expect(TenantLimits.Kind.streams.flag == "streams")
    }

    @Test func aBucketAdmitsItsRateAndASecondsBurst() {
        var bucket = TokenBucket(rate: 10, now: 0)
        // A second's worth at once, then nothing until it refills.
        for _ in 0..<10 { #expect(bucket.take(1, now: 0) == nil) }
        let wait = bucket.take(1, now: 0)
        #expect(wait != nil && abs((wait ?? 0) - 0.1) < 1e-9)
        // A tenth of a second refills one.
        #expect(bucket.take(1, now: 0.1) == nil)
        #expect(bucket.take(1, now: 0.1) != nil)
        // Never more than a second's worth, however long it waited.
        for _ in 0..<10 { #expect(bucket.take(1, now: 1000) == nil) }
        #expect(bucket.take(1, now: 1000) != nil)
        // The clock going back refills nothing.
        #expect(bucket.take(1, now: 999) != nil)
    }

    @Test func aBatchLargerThanTheBucketIsTakenWhenFullAndOwed() {
        var bucket = TokenBucket(rate: 1, now: 0)
        #expect(bucket.take(50, now: 0) == nil)
        #expect(bucket.tokens == -49)
        let wait = bucket.take(1, now: 0)
        #expect(wait == 50)
        // Paid back at the rate: 49 s later it holds nothing yet, 50 s later one.
        #expect(bucket.take(1, now: 49.5) != nil)
        #expect(bucket.take(1, now: 50) == nil)
        // Given back: a request a later check refused.
        var other = TokenBucket(rate: 2, now: 0)
        #expect(other.take(2, now: 0) == nil)
        other.giveBack(1)
        #expect(other.take(1, now: 0) == nil)
        #expect(other.take(1, now: 0) != nil)
    }

    @Test func aShareBelowOneAdmitsOneAndThenWaitsItsTime() {
        // 1 a second over 1,000 replicas.
        var bucket = TokenBucket(rate: 0.001, now: 0)
        #expect(bucket.take(1, now: 0) == nil)
        let wait = bucket.take(1, now: 0)
        #expect(wait.map { abs($0 - 1000) < 1e-6 } == true)
        #expect(bucket.take(1, now: 1000) == nil)
    }
}
