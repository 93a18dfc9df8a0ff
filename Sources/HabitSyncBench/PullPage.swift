import Foundation

/// What a benchmark needs of one pull response: how many changes, where to go on from.
struct PullPage {
    let changes: Int
    let cursor: String?
    let hasMore: Bool
    /// The first sync's phase the page reaches (`progress.phase`); nil from a server before phases.
    let phase: String?
    let bytes: Int

    /// Reads a page the server wrote (`{"changes":[{"collection":…},…],"cursor":…,"hasMore":…}`)
    /// without decoding the records: decoding them is the device's work, not the server's, and
    /// a full parse took this client about as long as the server took to produce the page.
    init(scanning body: Data) throws {
        let bytes = [UInt8](body)
        guard bytes.starts(with: Array(#"{"changes":["#.utf8)) else { throw BenchError("a pull page does not start with its changes") }
        let marker = Array(#"{"collection":""#.utf8)
        var count = 0
        var index = 0
        while let found = Self.find(marker, in: bytes, from: index) {
            count += 1
            index = found + marker.count
        }
        changes = count
        // What follows the changes: cursor, hasMore, epoch, the last page's digests (about
        // 700 bytes), serverTime. (200 bytes were read until the digests came: the cursor fell
        // outside, and every "incremental" pull started over.)
        let tail = String(decoding: bytes.suffix(4096), as: UTF8.self)
        hasMore = tail.contains(#""hasMore":true"#)
        self.bytes = bytes.count
        if let range = tail.range(of: #""phase":""#), let end = tail[range.upperBound...].firstIndex(of: "\"") {
            phase = String(tail[range.upperBound..<end])
        } else {
            phase = nil
        }
        if let range = tail.range(of: #""cursor":""#), let end = tail[range.upperBound...].firstIndex(of: "\"") {
            cursor = String(tail[range.upperBound..<end])
        } else {
            cursor = nil
        }
    }

    /// A plain byte search. Data.range(of:in:) was tried and measured: on Linux it made this
    /// client slower than the server it measures (initial sync 23,932 instead of about
    /// 165,000 records/s).
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count, start <= haystack.count - needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

/// A device's pulls over a `PlainHTTPConnection`.
final class Puller {
    private let connection: PlainHTTPConnection
    private let token: String

    init(port: Int, token: String) throws {
        connection = try PlainHTTPConnection(port: port)
        self.token = token
    }

    /// Blocks the calling thread for one request: the pull measurements run one request at a
    /// time, with nothing else in this process waiting for the thread.
    func page(cursor: String?, limit: Int) throws -> PullPage {
        var path = "/v1/sync/pull?limit=\(limit)"
        if let cursor { path += "&cursor=\(cursor)" }
        let (status, body) = try connection.get(path, headers: ["Authorization": "Bearer \(token)"])
        guard status == 200 else { throw BenchError("pull answered \(status)") }
        return try PullPage(scanning: body)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
