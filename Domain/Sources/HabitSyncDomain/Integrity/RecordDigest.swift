import Foundation

/// What a device checks its copy of a collection against (docs/protocol.md, "Digests"): how
/// many live records the user has in it, and the XOR of one 64-bit term per live record,
/// where the term is the first 8 bytes of `md5("<id>:<serverVersion>")` (the id in lowercase,
/// the version in decimal) read as a big-endian number. A record that is missing, extra, or
/// at another version changes it; XOR lets the server keep it up to date by adding and
/// removing terms as rows change, so reading it costs the same for any history.
public struct RecordDigest: Sendable, Hashable {
    public var count: Int64
    /// The XOR of the terms, as an unsigned 64-bit number.
    public var hash: UInt64

    public init(count: Int64 = 0, hash: UInt64 = 0) {
        self.count = count
        self.hash = hash
    }

    public static func term(id: UUID, serverVersion: Int64) -> UInt64 {
        md5Prefix(Array("\(id.uuidString.lowercased()):\(serverVersion)".utf8))
    }

    public mutating func add(id: UUID, serverVersion: Int64) {
        count += 1
        hash ^= Self.term(id: id, serverVersion: serverVersion)
    }

    /// Takes a live record's term out: what a write that changes or deletes it does to the
    /// digest. As a change to be added to a stored digest the count may fall below 0.
    public mutating func remove(id: UUID, serverVersion: Int64) {
        count -= 1
        hash ^= Self.term(id: id, serverVersion: serverVersion)
    }

    /// Adds another change (or digest): counts summed, terms XORed.
    public mutating func add(_ other: RecordDigest) {
        count += other.count
        hash ^= other.hash
    }

    /// Whether adding it to a digest changes nothing.
    public var isEmpty: Bool { count == 0 && hash == 0 }

    /// 16 lowercase hexadecimal digits, as the pull's `digests` carries it.
    public var hashText: String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    public init?(count: Int64, hashText: String) {
        guard count >= 0, hashText.utf8.count == 16, let hash = UInt64(hashText, radix: 16) else { return nil }
        self.init(count: count, hash: hash)
    }
}

extension RecordDigest {
    /// The first 8 bytes of MD5(`bytes`), big-endian: a term.
    public static func md5Prefix(_ bytes: [UInt8]) -> UInt64 {
        MD5.digest(bytes).prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
