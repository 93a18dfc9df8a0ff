import Foundation
import HabitSyncDomain
import HabitSyncStore
import Testing

@testable import HabitSyncServer

/// The stream registry without a network: what a stream holds while nobody reads it, who is
/// told of what, and the limits.
@Suite struct ChangeStreamsTests {
    static let tenant = UUID()

    static func notice(_ user: String, version: Int64, device: String = "phone", collections: [SyncCollection] = [.habits]) -> ChangeNotice {
        ChangeNotice(tenantID: tenant, userID: user, serverVersion: version, deviceID: device, collections: collections)
    }

    @Test func aStreamNobodyReadsHoldsOneCoalescedChangeWhateverArrives() async throws {
        let streams = ChangeStreams()
        let id = try streams.open(tenant: Self.tenant, user: "ada", device: "watch")
        for version in 1...10_000 {
            streams.deliver(Self.notice("ada", version: Int64(version), collections: [version % 2 == 0 ? .habits : .usageEvents]))
        }
        #expect(await streams.next(id) == .changed(serverVersion: 10_000, collections: [.habits, .usageEvents]))
        // Nothing else was queued behind it: the next signal is a later one.
        streams.deliver(Self.notice("ada", version: 10_001))
        #expect(await streams.next(id) == .changed(serverVersion: 10_001, collections: [.habits]))
    }

    @Test func onlyTheUsersOtherDevicesAreTold() async throws {
        let streams = ChangeStreams()
        let watch = try streams.open(tenant: Self.tenant, user: "ada", device: "watch")
        let phone = try streams.open(tenant: Self.tenant, user: "ada", device: "phone")
        let grace = try streams.open(tenant: Self.tenant, user: "grace", device: "watch")
        let otherTenant = try streams.open(tenant: UUID(), user: "ada", device: "watch")
        #expect(streams.deliver(Self.notice("ada", version: 5, device: "phone")) == 0)  // nobody waits yet
        streams.deliver(Self.notice("grace", version: 9, device: "tablet"))
        streams.close(reason: "test")
        #expect(await streams.next(watch) == .close(reason: "test"))  // close first, then nothing
        #expect(await streams.next(watch) == nil)
        #expect(await streams.next(phone) == .close(reason: "test"))
        #expect(await streams.next(grace) == .close(reason: "test"))
        #expect(await streams.next(otherTenant) == .close(reason: "test"))
    }

    @Test func pendingSignalsComeMostUrgentFirst() async throws {
        let streams = ChangeStreams()
        let id = try streams.open(tenant: Self.tenant, user: "ada", device: nil)
        streams.deliver(Self.notice("ada", version: 3))
        streams.pullEverywhere(reason: "listener_reconnected")
        // A pull covers the change it replaced.
        #expect(await streams.next(id) == .pull(reason: "listener_reconnected"))
        streams.deliver(Self.notice("ada", version: 4))
        #expect(await streams.next(id) == .changed(serverVersion: 4, collections: [.habits]))
    }

    @Test func limitsPerUserAndPerServerAreKeptAndFreedOnRemove() throws {
        var limits = RealtimeLimits()
        limits.streamsPerUser = 2
        limits.streams = 3
        let streams = ChangeStreams(limits: limits)
        let first = try streams.open(tenant: Self.tenant, user: "ada", device: nil)
        _ = try streams.open(tenant: Self.tenant, user: "ada", device: nil)
        #expect(throws: ChangeStreams.Refusal.userLimit) { try streams.open(tenant: Self.tenant, user: "ada", device: nil) }
        _ = try streams.open(tenant: Self.tenant, user: "grace", device: nil)
        #expect(throws: ChangeStreams.Refusal.serverLimit) { try streams.open(tenant: Self.tenant, user: "grace", device: nil) }
        streams.remove(first)
        #expect(streams.openCount == 2)
        _ = try streams.open(tenant: Self.tenant, user: "ada", device: nil)
    }
}
