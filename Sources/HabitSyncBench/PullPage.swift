import Foundation
import ServerHarness

/// What a benchmark needs of one pull response: how many changes, where to go on from.
struct PullPage {
    let changes: Int
    let cursor: String?
    let hasMore: Bool
}

extension DeviceClient {
    func pullPage(cursor: String?, limit: Int) async throws -> PullPage {
        let reply = try await pull(cursor: cursor, limit: limit)
        guard reply.status == 200 else { throw BenchError("pull answered \(reply.status)") }
        let object = reply.json()
        return PullPage(changes: (object["changes"] as? [Any])?.count ?? 0, cursor: object["cursor"] as? String, hasMore: object["hasMore"] as? Bool ?? false)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
