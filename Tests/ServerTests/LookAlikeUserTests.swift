import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import Testing

@testable import HabitSyncServer

/// Issue 25, item 2: PostgreSQL tells users apart by the bytes of their id; every per-user
/// structure in memory must too. Swift's `String ==` merged "café" (U+00E9) with "cafe" plus a
/// combining acute, and "Kelvin" with the Kelvin sign: one user's stream got the other's change
/// events, and one exhausted the other's stream quota and push queue.
@Suite struct LookAlikeUserTests {
    static let tenant = UUID()

    /// Pairs that are two users in PostgreSQL: canonically equivalent (Swift calls them equal),
    /// compatibility-equivalent (fullwidth) and case-different.
    static let pairs: [(String, String)] = [
        ("caf\u{E9}", "cafe\u{301}"),
        ("Kelvin", "\u{212A}elvin"),
        ("\u{212B}ngstr\u{F6}m", "A\u{30A}ngstro\u{308}m"),
        ("alice", "\u{FF41}\u{FF4C}\u{FF49}\u{FF43}\u{FF45}"),
        ("Alice", "alice"),
    ]

    @Test func theSwiftStringsOfTheCanonicalPairsAreEqualWhichIsTheTrap() {
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect("Kelvin" == "\u{212A}elvin")
        for (first, second) in Self.pairs {
            #expect(UserKey(tenant: Self.tenant, user: first) != UserKey(tenant: Self.tenant, user: second), "\(first.debugDescription)")
            #expect(!first.utf8.elementsEqual(second.utf8))
        }
    }

    @Test(arguments: pairs.indices)
    func streamsAreNotShared(_ index: Int) async throws {
        let (first, second) = Self.pairs[index]
        let streams = ChangeStreams(limits: RealtimeLimits())
        // The first user's streams, up to the per-user quota.
        let firsts = try (0..<streams.limits.streamsPerUser).map { try streams.open(tenant: Self.tenant, user: first, device: "watch-\($0)") }
        #expect(throws: ChangeStreams.Refusal.userLimit) { try streams.open(tenant: Self.tenant, user: first, device: "one-more") }
        // The look-alike still gets a stream of its own…
        let other = try streams.open(tenant: Self.tenant, user: second, device: "watch")
        // …and is not told of the first user's changes, nor they of its.
        #expect(streams.deliver(ChangeNotice(tenantID: Self.tenant, userID: first, serverVersion: 7, deviceID: "phone", collections: [.habits])) == 0)
        streams.deliver(ChangeNotice(tenantID: Self.tenant, userID: second, serverVersion: 3, deviceID: "phone", collections: [.reminders]))
        #expect(await streams.next(other) == .changed(serverVersion: 3, collections: [.reminders]))
        #expect(await streams.next(firsts[0]) == .changed(serverVersion: 7, collections: [.habits]))
    }

    /// A device whose id only looks like the pushing device's is another device: it is told.
    @Test func aLookAlikeDeviceOfTheSameUserIsTold() async throws {
        let streams = ChangeStreams(limits: RealtimeLimits())
        let watch = try streams.open(tenant: Self.tenant, user: "ada", device: "caf\u{E9}")
        streams.deliver(ChangeNotice(tenantID: Self.tenant, userID: "ada", serverVersion: 4, deviceID: "cafe\u{301}", collections: [.habits]))
        #expect(await streams.next(watch) == .changed(serverVersion: 4, collections: [.habits]))
    }

    @Test(arguments: pairs.indices)
    func pushQueuesAreNotShared(_ index: Int) async throws {
        let (first, second) = Self.pairs[index]
        // No room to wait: while a push of a user runs, another push of that user is refused.
        let queue = UserPushQueue(maximumWaiting: 0)
        let (release, releaser) = AsyncStream<Void>.makeStream()
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        let running = Task {
            try await queue.serialised(tenant: Self.tenant, user: first) {
                enteredSignal.yield()
                for await _ in release { break }
            }
        }
        for await _ in entered { break }
        await #expect(throws: StoreError.self) { try await queue.serialised(tenant: Self.tenant, user: first) {} }
        // The look-alike runs at once: neither queued behind the first user nor refused.
        try await queue.serialised(tenant: Self.tenant, user: second) {}
        releaser.yield()
        try await running.value
    }

    @Test(arguments: pairs.indices)
    func expensiveReadQuotasAreNotShared(_ index: Int) throws {
        let (first, second) = Self.pairs[index]
        let limiter = ExpensiveReadLimiter(perUser: 1, metrics: ServerMetrics())
        let held = try limiter.admit(.trusted(tenantID: Self.tenant, userID: first), kind: "stats")
        #expect(throws: StoreError.self) { try limiter.admit(.trusted(tenantID: Self.tenant, userID: first), kind: "stats") }
        let other = try limiter.admit(.trusted(tenantID: Self.tenant, userID: second), kind: "stats")
        held.release()
        other.release()
        // Given back: the first user may run one again.
        try limiter.admit(.trusted(tenantID: Self.tenant, userID: first), kind: "stats").release()
    }

    @Test func aSlotDroppedUnusedGivesItsPlaceBack() throws {
        let limiter = ExpensiveReadLimiter(perUser: 1, metrics: ServerMetrics())
        let identity = VerifiedIdentity.trusted(tenantID: Self.tenant, userID: "ada")
        do { _ = try limiter.admit(identity, kind: "export") }
        try limiter.admit(identity, kind: "export").release()
    }
}
