import HabitSyncDomain
import SeededRandom
import Testing

@Suite struct DayRangesTests {
    @Test func adjacentAndOverlappingRangesJoinAndGapsStay() {
        #expect(DayRanges.coalesced([]) == [])
        #expect(DayRanges.coalesced([5...9]) == [5...9])
        #expect(DayRanges.coalesced([10...20, 1...9]) == [1...20])
        #expect(DayRanges.coalesced([1...9, 11...20]) == [1...9, 11...20])
        #expect(DayRanges.coalesced([1...30, 5...6, 31...31, 40...50, 45...60]) == [1...31, 40...60])
        #expect(DayRanges.coalesced([Int.min...0, 1...Int.max]) == [Int.min...Int.max])
    }

    /// The same days, in sorted disjoint non-adjacent ranges, whatever the input.
    @Test func randomRangesKeepExactlyTheirDays() {
        var random = SeededGenerator(seed: 29)
        for _ in 0..<500 {
            let ranges = (0..<Int.random(in: 0...8, using: &random)).map { _ -> ClosedRange<Int> in
                let low = Int.random(in: 0...60, using: &random)
                return low...(low + Int.random(in: 0...10, using: &random))
            }
            let joined = DayRanges.coalesced(ranges)
            #expect(Set(joined.flatMap { Array($0) }) == Set(ranges.flatMap { Array($0) }))
            for (a, b) in zip(joined, joined.dropFirst()) { #expect(b.lowerBound > a.upperBound + 1) }
        }
    }
}
