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
