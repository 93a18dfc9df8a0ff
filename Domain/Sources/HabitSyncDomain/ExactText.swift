/// Text compared and hashed by its UTF-8 bytes, as PostgreSQL's `text =` compares it. Swift's
/// `String ==` is canonical equivalence: "café" (U+00E9) equals "cafe" + U+0301, and "K" the
/// Kelvin sign, while the database stores and tells them apart. A set or dictionary keyed by
/// text a request carried (an `achievementId`, a device id, an issuer) uses this, so that what
/// is one key in memory is one key in the database.
public struct ExactText: Hashable, Sendable, CustomStringConvertible {
    public let text: String
    private let bytes: [UInt8]

    public init(_ text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    public static func == (lhs: ExactText, rhs: ExactText) -> Bool { lhs.bytes == rhs.bytes }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    public var description: String { text }
}
