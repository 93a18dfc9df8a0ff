/// The hash Citus places a row by when its distribution column is `text` (`users.user_id`):
/// PostgreSQL's `hashtext`, Bob Jenkins' lookup3 over the value's UTF-8 bytes
/// (`hash_bytes` in PostgreSQL's `src/common/hashfn.c`), as a signed 32-bit value. The server
/// computes it itself so that finding a user's node costs no query: `DistributionHashTests`
/// compares it with PostgreSQL's `hashtext` over edge strings, and the Citus target with
/// Citus' own `worker_hash`.
enum DistributionHash {
    static func of(_ bytes: [UInt8]) -> Int32 {
        let length = UInt32(truncatingIfNeeded: bytes.count)
        var a: UInt32 = 0x9e37_79b9 &+ length &+ 3_923_095
        var b = a
        var c = a
        var index = 0
        // Every 12 bytes are three little-endian words, whatever the buffer's alignment
        // (PostgreSQL's aligned and unaligned paths give the same words on a little-endian
        // machine, and its big-endian builds hash differently: Citus on them is out of scope).
        while bytes.count - index >= 12 {
            a &+= word(bytes, index, count: 4)
            b &+= word(bytes, index + 4, count: 4)
            c &+= word(bytes, index + 8, count: 4)
            mix(&a, &b, &c)
            index += 12
        }
        let rest = bytes.count - index
        a &+= word(bytes, index, count: min(rest, 4))
        if rest > 4 { b &+= word(bytes, index + 4, count: min(rest - 4, 4)) }
        // The lowest byte of c is reserved for the length (already in the initial state).
        if rest > 8 { c &+= word(bytes, index + 8, count: rest - 8) << 8 }
        final(&a, &b, &c)
        return Int32(bitPattern: c)
    }

    /// Up to four bytes from `start`, little-endian.
    private static func word(_ bytes: [UInt8], _ start: Int, count: Int) -> UInt32 {
        var value: UInt32 = 0
        for offset in 0..<max(0, count) { value |= UInt32(bytes[start + offset]) << (8 * UInt32(offset)) }
        return value
    }

    private static func rotate(_ x: UInt32, _ k: UInt32) -> UInt32 { (x << k) | (x >> (32 - k)) }

    private static func mix(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32) {
        a &-= c; a ^= rotate(c, 4); c &+= b
        b &-= a; b ^= rotate(a, 6); a &+= c
        c &-= b; c ^= rotate(b, 8); b &+= a
        a &-= c; a ^= rotate(c, 16); c &+= b
        b &-= a; b ^= rotate(a, 19); a &+= c
        c &-= b; c ^= rotate(b, 4); b &+= a
    }

    private static func final(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32) {
        c ^= b; c &-= rotate(b, 14)
        a ^= c; a &-= rotate(c, 11)
        b ^= a; b &-= rotate(a, 25)
        c ^= b; c &-= rotate(b, 16)
        a ^= c; a &-= rotate(c, 4)
        b ^= a; b &-= rotate(a, 14)
        c ^= b; c &-= rotate(b, 24)
    }
}
