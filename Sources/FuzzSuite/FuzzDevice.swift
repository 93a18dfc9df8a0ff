import Foundation
import ServerHarness

/// A device of the fuzz run: its client, its cursor, and the records it holds from pulling.
final class FuzzDevice {
    let user: String
    let client: DeviceClient
    private(set) var cursor: String?
    /// `collection/id` → the latest change pulled (upserts only; a delete removes the key).
    private(set) var state: [String: [String: Any]] = [:]

    init(user: String, client: DeviceClient) {
        self.user = user
        self.client = client
    }

    var name: String { client.device }

    /// Pulls until `hasMore` is false, applying what arrives; a `410` starts over without a
    /// cursor. Returns every reply seen, for the run's invariants.
    func sync(limit: Int) async throws -> [HTTPReply] {
        var replies: [HTTPReply] = []
        for _ in 0..<10_000 {
            let reply = try await client.pull(cursor: cursor, limit: limit)
            replies.append(reply)
            if reply.status == 410 {
                cursor = nil
                state = [:]
                continue
            }
            guard reply.status == 200, let json = try? reply.json() else { return replies }
            for change in json["changes"] as? [[String: Any]] ?? [] {
                let key = Self.key(change)
                if change["op"] as? String == "delete" { state[key] = nil } else { state[key] = change }
            }
            cursor = json["cursor"] as? String
            if json["hasMore"] as? Bool != true { return replies }
        }
        return replies
    }

    static func key(_ change: [String: Any]) -> String { "\(change["collection"] ?? "?")/\(change["id"] ?? "?")" }
}
