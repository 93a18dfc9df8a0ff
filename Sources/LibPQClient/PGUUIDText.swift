import Foundation

/// `uuid` text in and out, byte by byte: lowercase `8-4-4-4-12`, as PostgreSQL prints it.
/// Foundation's `uuidString` formats with `snprintf` (uppercase, then lowercased for the
/// server) and `UUID(uuidString:)` scans; on an app-open check-in, whose statements bind and
/// read a dozen ids, the two were about a twentieth of the server's CPU.
enum PGUUIDText {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The 36 bytes of the text.
    static func bytes(_ uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { raw in
            [UInt8](unsafeUninitializedCapacity: 36) { buffer, count in
                var out = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[out] = UInt8(ascii: "-")
                        out += 1
                    }
                    buffer[out] = hexDigits[Int(byte >> 4)]
                    buffer[out + 1] = hexDigits[Int(byte & 0x0F)]
                    out += 2
                }
                count = out
            }
        }
    }

    static func format(_ uuid: UUID) -> String {
        String(decoding: bytes(uuid), as: UTF8.self)
    }

    /// What `UUID(uuidString:)` accepts: 36 characters, hyphens after the 8th, 12th, 16th and
    /// 20th hexadecimal digit, digits in either case; nil for anything else.
    static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { utf8 -> UUID? in
            guard utf8.count == 36 else { return nil }
            var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let parsed = withUnsafeMutableBytes(of: &value) { out -> Bool in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard utf8[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                    }
                    guard let high = nibble(utf8[position]), let low = nibble(utf8[position + 1]) else { return false }
                    out[index] = high << 4 | low
                    position += 2
                }
                return true
            }
            return parsed ? UUID(uuid: value) : nil
        }
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
