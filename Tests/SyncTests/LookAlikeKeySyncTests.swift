import Foundation
import HabitSyncDomain
import SyncTestSupport
import TestSupport
import Testing

/// Text a request carries is one key in memory exactly when it is one key in PostgreSQL: by its
/// bytes (`ExactText`). Two `achievementId`s, or two records, whose text differs only in Unicode
/// normalisation ("café" with U+00E9, and "cafe" + U+0301, equal under Swift's `==`) stay two,
/// whether they arrive in one batch or in two (issue 44).
@Suite struct LookAlikeKeySyncTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    static func achievement(_ id: String, title: String) -> JSON {
        ["achievementId": id, "title": title, "description": "", "unlockedAt": Wire.at(0), "xpAwarded": 10]
    }

    @Test(arguments: [true, false])
    func achievementIDsThatDifferOnlyInNormalisationAreTwoAchievements(oneBatch: Bool) async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let ada = try await world.client(server, user: "ada")
            let first = Wire.change("achievements", UUID(), at: Wire.at(0), record: Self.achievement(Self.composed, title: "composed"))
            let second = Wire.change("achievements", UUID(), at: Wire.at(0), record: Self.achievement(Self.decomposed, title: "decomposed"))
            var results: [JSON] = []
            if oneBatch {
                results = try await ada.push([first, second]).results
            } else {
                results = try await ada.push([first]).results + ada.push([second]).results
            }
            #expect(results.count == 2 && results.allSatisfy { $0["status"] as? String == "applied" }, "\(results)")
            #expect(results.allSatisfy { $0["canonicalId"] == nil }, "neither is kept under the other's id: \(results)")
            #expect(try await world.count("achievements") == 2)
            #expect(try await world.count("achievements", where: "achievement_id = '\(Self.composed)' AND title = 'composed'") == 1)
            #expect(try await world.count("achievements", where: "achievement_id = '\(Self.decomposed)' AND title = 'decomposed'") == 1)
        }
    }

    /// Two habits in one batch whose records differ only in the normalisation of their names:
    /// each is stored with its own bytes (the fold once looked validated records up by their
    /// text as a `String`, and stored one habit's name on the other).
    @Test func recordsThatDifferOnlyInNormalisationKeepTheirOwnBytes() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let ada = try await world.client(server, user: "ada")
            let (one, two) = (UUID(), UUID())
            let reply = try await ada.push([
                Wire.change("habits", one, at: Wire.at(0), record: Wire.habit(name: Self.composed)),
                Wire.change("habits", two, at: Wire.at(0), record: Wire.habit(name: Self.decomposed)),
            ])
            #expect(reply.status(0) == "applied" && reply.status(1) == "applied")
            #expect(try await world.count("habits", where: "id = '\(one)' AND name = '\(Self.composed)'") == 1)
            #expect(try await world.count("habits", where: "id = '\(two)' AND name = '\(Self.decomposed)'") == 1)
        }
    }
}
