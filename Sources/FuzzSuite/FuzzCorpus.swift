import Foundation
import HabitSyncDomain
import SeededRandom

/// The adversarial values the fuzzer draws from: text that PostgreSQL and Swift could see
/// differently, numbers at the edges of doubles and integers, dates at the edges of the
/// calendar, every time zone PostgreSQL knows plus ones it does not, and a small pool of ids
/// so that ids repeat within a batch, across collections and across users.
struct FuzzCorpus {
    let timeZones: [String]
    /// Shared by every user and collection on purpose.
    let ids: [UUID]

    init(timeZones: [String], idCount: Int = 40, random: inout SeededGenerator) {
        self.timeZones = timeZones + ["UTC+5", "GMT+0530", "Mars/Olympus", "Europe/Berlin\n", "", "../../etc/passwd", "EST5EDT", "localtime"]
        ids = (0..<idCount).map { _ in UUID.random(using: &random) }
    }

    static let strings: [String] = {
        var values = [
            "", " ", "a", "Read", "  a  ", "\n", "a\n", "\u{0}", "a\u{0}b", "\r\n", "\t", "\u{7F}", "\u{85}", "\u{2028}", "a\u{2029}",
            "e\u{301}", "\u{301}", "🏃‍♀️", "👍🏽", "\u{FEFF}", "\u{200B}", "\u{00A0}", "\u{3000}", "名前", "\u{10FFFF}", "\\", "\"", "'",
            "%s%n", "${jndi:x}", "'; DROP TABLE habits; --", "<script>", "null", "true", "-0", "1e308", "NaN",
            "#FFFFFF", "#ffffff00", "#FFFFFF\n", "12:30", "23:59", "24:00", "instagram://", "a://x y", "a://x\n",
            "exit_to_focus", "proceed_to_app", "deepen_pause", "completed", "active", "paused", "abandoned", "medical", "rest",
            "formation", "breaking", "daily", "everyNDays", "specificWeekdays", "notStarted", "phase2Complete", "server",
        ]
        for count in [50, 51, 100, 101, 200, 201, 500, 501, 2000, 2001, 10_000] {
            values.append(String(repeating: "x", count: count))
            values.append(String(repeating: "é", count: count))
        }
        values += [" " + String(repeating: "x", count: 200) + " ", String(repeating: "x", count: 200) + "\n", String(repeating: "🏃", count: 201)]
        return values
    }()

    static let numbers: [Double] = [
        0, -0.0, 1, -1, 2, 5, 7, 10, 15, 30, 31, 45, 46, 100, 1500, 1501, 0.5, 2.5, 1e-300,
        Double.leastNonzeroMagnitude,  // 5e-324
        1e308, -1e308, 2_147_483_647, 2_147_483_648,
        9_007_199_254_740_992,  // 2^53: the JSON text 9007199254740993 (2^53 + 1) reads as this
        100_000, 100_001, -100_000, 300, 1200,
    ]

    static let dates = [
        "2026-11-20", "2026-11-01", "2026-02-28", "2024-02-29", "2026-02-29", "0001-01-01", "1969-12-31", "1970-01-01",
        "9999-12-31", "2200-01-01", "2026-13-01", "2026-11-20\n", "20261120", "2026-11-20T00:00:00Z",
    ]

    static func times(now: Date) -> [String] {
        let recent = (0..<6).map { WireTime.format(now.addingTimeInterval(-Double($0) * 86_400 * 11)) }
        return recent + [
            WireTime.format(now), WireTime.format(now.addingTimeInterval(240)), WireTime.format(now.addingTimeInterval(3600)),
            "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "9999-12-31T23:59:59.999-23:59", "2031-03-04T05:06:07Z",
            "2026-11-20T08:15:30.9999999Z", "2026-11-20T08:15:30.1234567890123Z", "2026-02-30T00:00:00Z", "2026-11-20T08:15:30", "not a time", "2026-11-20 08:15:30+05:30",
        ]
    }
}

extension UUID {
    static func random(using random: inout SeededGenerator) -> UUID {
        let a = random.next(), b = random.next()
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: a >> ($0 * 8)) } + (0..<8).map { UInt8(truncatingIfNeeded: b >> ($0 * 8)) }
        var t = bytes
        t[6] = (t[6] & 0x0F) | 0x40
        t[8] = (t[8] & 0x3F) | 0x80
        return UUID(uuid: (t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15]))
    }
}
