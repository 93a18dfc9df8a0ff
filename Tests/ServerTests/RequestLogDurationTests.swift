import Foundation
import Testing

@testable import HabitSyncServer

/// The request log's `duration_ms`, written without printf (issue 46): one decimal, and the
/// nearest tenth of what was measured.
@Suite struct RequestLogDurationTests {
    @Test func aDurationIsItsNearestTenth() {
        var values: [Double] = [0, 0.04, 0.05, 0.06, 0.949, 0.95, 0.99, 1, 9.96, 12.34, 999.95, 123_456.7, 86_400_000]
        for step in 0..<2_000 { values.append(Double(step) * 0.0137) }
        for value in values {
            let text = RequestObservationMiddleware.tenths(value)
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            #expect(parts.count == 2 && parts[1].count == 1 && parts.allSatisfy { $0.allSatisfy(\.isNumber) }, "\(value): \(text)")
            let parsed = Double(text) ?? -1
            #expect(abs(parsed - value) <= 0.05 + 1e-9, "\(value): \(text)")
        }
    }

    @Test func whatNoClockMeasuresIsStillText() {
        #expect(RequestObservationMiddleware.tenths(-1) == "-1.0")
        #expect(RequestObservationMiddleware.tenths(.infinity) == "inf")
    }
}
