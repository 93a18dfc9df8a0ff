import Foundation
import HabitSyncServer
import Testing

/// `/metrics`' tenant label is bounded: the first tenants seen get their id, the rest `other`.
@Suite struct TenantMetricLabelsTests {
    @Test func theFirstTenantsKeepTheirIdAndTheRestAreOther() {
        let labels = TenantMetricLabels(limit: 2)
        let (a, b, c) = (UUID(), UUID(), UUID())
        #expect(labels.label(a) == a.uuidString.lowercased())
        #expect(labels.label(b) == b.uuidString.lowercased())
        #expect(labels.label(c) == "other")
        // Those labelled keep their label; the others stay other.
        #expect(labels.label(a) == a.uuidString.lowercased())
        #expect(labels.label(c) == "other")
        #expect(Set((0..<1000).map { _ in labels.label(UUID()) }) == ["other"])
        #expect(TenantMetricLabels(limit: 0).label(a) == "other")
    }
}
