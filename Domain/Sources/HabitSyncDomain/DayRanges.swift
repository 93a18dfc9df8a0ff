/// Sets of days as inclusive ranges of day numbers (`LocalDate.dayNumber`).
public enum DayRanges {
    /// The same days as `ranges`, in as few ranges as possible: sorted, with overlapping and
    /// adjacent ranges joined. A recompute that reads the 120 months of a new ten-year habit
    /// reads them as one range, one index probe per habit instead of one per habit and month.
    public static func coalesced(_ ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        var joined: [ClosedRange<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            // `last.upperBound + 1` is only reached when it is below `range.lowerBound`: no overflow.
            if let last = joined.last, range.lowerBound <= last.upperBound || range.lowerBound == last.upperBound + 1 {
                joined[joined.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                joined.append(range)
            }
        }
        return joined
    }
}
