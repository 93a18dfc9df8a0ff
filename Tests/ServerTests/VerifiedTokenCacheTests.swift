import Foundation
import Testing

@testable import HabitSyncAuth
@testable import HabitSyncServer

/// The cache of tokens that verified: it answers only for the exact token, only before the
/// token's `exp`, never when caching is off, and stays within its capacity.
@Suite struct VerifiedTokenCacheTests {
    static let ada = VerifiedIdentity(tenantID: UUID(), userID: "ada", expiresAt: Date(timeIntervalSince1970: 2_000_000_000))

    @Test func itAnswersForTheExactTokenOnlyAndNotFromItsExpiryOn() {
        let cache = VerifiedTokenCache(lifetime: .seconds(3600))
        cache.remember(Self.ada, for: "a.b.c")
        let expiry = Self.ada.expiresAt
        #expect(cache.identity(for: "a.b.c", now: expiry.addingTimeInterval(-1)) == Self.ada)
        #expect(cache.identity(for: "a.b.c", now: expiry) == nil, "an expired token is verified in full (where the leeway is decided)")
        #expect(cache.identity(for: "a.b.c ", now: expiry.addingTimeInterval(-1)) == nil)
        #expect(cache.identity(for: "a.b.C", now: expiry.addingTimeInterval(-1)) == nil)
        #expect(cache.identity(for: "a.b.c\u{0}", now: expiry.addingTimeInterval(-1)) == nil)
    }

    @Test func aZeroLifetimeCachesNothing() {
        let cache = VerifiedTokenCache(lifetime: .zero)
        cache.remember(Self.ada, for: "a.b.c")
        #expect(cache.count == 0)
        #expect(cache.identity(for: "a.b.c", now: Date(timeIntervalSince1970: 0)) == nil)
    }

    @Test func itHoldsAtMostTwoGenerationsOfItsCapacity() {
        let cache = VerifiedTokenCache(lifetime: .seconds(3600), capacity: 3)
        let early = Date(timeIntervalSince1970: 0)
        for index in 0..<3 { cache.remember(Self.ada, for: "token-\(index)") }
        cache.remember(Self.ada, for: "token-3")
        #expect(cache.identity(for: "token-0", now: early) == Self.ada, "the previous generation still answers")
        for index in 4..<7 { cache.remember(Self.ada, for: "token-\(index)") }
        #expect(cache.identity(for: "token-0", now: early) == nil)
        #expect(cache.identity(for: "token-6", now: early) == Self.ada)
        #expect(cache.count <= 6)
    }
}
