import Foundation
import HabitSyncDomain
import HabitSyncStore
import Testing

/// The change notice's payload (`ChangeNotice`), which every replica's listener parses: a
/// traced push's `traceparent` travels in it (`p`), and replicas of either release read each
/// other's notices.
@Suite struct ChangeNoticePayloadTests {
    static let tenant = UUID()
    static let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    @Test func aTracedPushsParentTravelsAndAnUntracedOneAddsNothing() throws {
        let traced = ChangeNotice(tenantID: Self.tenant, userID: "ada", serverVersion: 7, deviceID: "phone", collections: [.habits], traceParent: Self.parent)
        #expect(ChangeNotice(payload: traced.payload) == traced)
        #expect(ChangeNotice(payload: traced.payload)?.traceParent == Self.parent)
        let untraced = ChangeNotice(tenantID: Self.tenant, userID: "ada", serverVersion: 7, deviceID: "phone", collections: [.habits])
        #expect(!untraced.payload.contains("\"p\""))
        #expect(ChangeNotice(payload: untraced.payload) == untraced)
    }

    @Test func noticesOfEitherReleaseAreReadAndAnOversizedParentIsDropped() throws {
        // An earlier release's notice (no `p`) is read; one with a `p` of another type too.
        let earlier = #"{"t":"\#(Self.tenant.uuidString.lowercased())","u":"ada","v":3,"d":"phone","c":["habits"]}"#
        #expect(ChangeNotice(payload: earlier)?.serverVersion == 3)
        #expect(ChangeNotice(payload: earlier)?.traceParent == nil)
        let odd = #"{"t":"\#(Self.tenant.uuidString.lowercased())","u":"ada","v":3,"d":"phone","c":[],"p":42}"#
        #expect(ChangeNotice(payload: odd)?.traceParent == nil)
        let long = ChangeNotice(tenantID: Self.tenant, userID: "ada", serverVersion: 1, deviceID: "phone", collections: [], traceParent: String(repeating: "a", count: 500))
        #expect(long.traceParent == nil)
    }
}
