import Foundation
import HabitSyncDomain
import ServerHarness

/// What a benchmark needs of one pull response: how many changes, where to go on from.
struct PullPage {
    let changes: Int
    let cursor: String?
    let hasMore: Bool
}

extension DeviceClient {
    /// Reads and parses the whole page, as a device must. The parser is the server's own
    /// (`JSONParser`): Foundation's JSONSerialization took longer to parse a 5,000-change page
    /// than the server took to produce it, and the benchmark measures the server.
    func pullPage(cursor: String?, limit: Int) async throws -> PullPage {
        let reply = try await pull(cursor: cursor, limit: limit)
        guard reply.status == 200 else { throw BenchError("pull answered \(reply.status)") }
        guard case .object(let page) = try JSONParser.parse(reply.body), case .array(let changes)? = page["changes"] else {
            throw BenchError("a pull page is not an object with changes")
        }
        var next: String?
        if case .string(let text)? = page["cursor"] { next = text }
        var hasMore = false
        if case .bool(let flag)? = page["hasMore"] { hasMore = flag }
        return PullPage(changes: changes.count, cursor: next, hasMore: hasMore)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
