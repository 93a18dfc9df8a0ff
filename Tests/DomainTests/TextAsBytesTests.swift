import Foundation
import HabitSyncDomain
import Testing

/// A time zone name is accepted by its bytes: PostgreSQL looks names up byte for byte, while a
/// `Set<String>` also finds a canonically equivalent spelling.
@Suite struct TimeZoneNamesTests {
    @Test func aLookAlikeSpellingOfAKnownZoneIsNotKnown() {
        let names = TimeZoneNames(["Asia/Kolkata", "Europe/Paris", "UTC"])
        #expect(names.contains("Asia/Kolkata"))
        #expect("Asia/\u{212A}olkata" == "Asia/Kolkata", "Swift calls the Kelvin sign a K")
        #expect(!names.contains("Asia/\u{212A}olkata"))
        #expect(!names.contains("Europe/Pari\u{73}\u{307}"))
        #expect(!names.contains("\u{FF35}\u{FF34}\u{FF23}"))
    }
}

/// Last-writer-wins keys are equal only when PostgreSQL's `COLLATE "C"` would call them equal.
@Suite struct LWWKeyBytesTests {
    @Test func lookAlikeDeviceIdsAreOrderedAndNeverEqual() {
        let at = Date(timeIntervalSince1970: 1_795_162_530)
        let composed = LWWKey(updatedAt: at, deviceID: "caf\u{E9}"), decomposed = LWWKey(updatedAt: at, deviceID: "cafe\u{301}")
        #expect(composed != decomposed)
        #expect(decomposed < composed, "e (0x65) sorts before 0xC3 as bytes")
        #expect(!(composed < decomposed))
        #expect(Set([composed, decomposed]).count == 2)
        #expect(LWWKey(updatedAt: at, deviceID: "caf\u{E9}") == composed)
    }
}
