import Crypto
import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore

/// A push straight through the `PushStore` the server calls, without HTTP: for tests that
/// count what one push sends to PostgreSQL.
public enum StorePush {
    /// The batch's results (empty unless it was stored with 200).
    public static func results(_ changes: [JSON], through store: PushStore, as identity: VerifiedIdentity) async throws -> [JSON] {
        let body = try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])
        let request = try PushRequest.parse(bytes: Array(body), maximumChanges: 1000)
        let (outcome, _) = try await store.push(identity: identity, deviceID: "phone", request: request, requestHash: Array(SHA256.hash(data: body)))
        guard case .response(200, let bytes, false) = outcome, let json = try JSONSerialization.jsonObject(with: Data(bytes)) as? JSON else { return [] }
        return json["results"] as? [JSON] ?? []
    }
}
