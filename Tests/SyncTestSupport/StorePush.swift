import Crypto
import Foundation
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncServer
import HabitSyncStore

/// A push straight through the `PushStore` the server calls, without HTTP (its answer encoded
/// as the server encodes it): for tests that count what one push sends to PostgreSQL, and for
/// property tests that push thousands of batches.
public enum StorePush {
    /// The batch's results (empty unless it was stored with 200).
    public static func results(
        _ changes: [JSON], through store: PushStore, as identity: VerifiedIdentity, device: String = "phone", protocolVersion: Int? = nil,
        batchID: UUID = UUID()
    ) async throws -> [JSON] {
        try await response(changes, through: store, as: identity, device: device, protocolVersion: protocolVersion, batchID: batchID)["results"] as? [JSON] ?? []
    }

    /// The whole answer of a push stored with 200 (empty otherwise): the same bytes again
    /// replay it.
    public static func response(
        _ changes: [JSON], through store: PushStore, as identity: VerifiedIdentity, device: String = "phone", protocolVersion: Int? = nil,
        batchID: UUID = UUID()
    ) async throws -> JSON {
        var envelope: JSON = ["batchId": batchID.uuidString, "changes": changes]
        if let protocolVersion { envelope["protocolVersion"] = protocolVersion }
        let body = try JSONSerialization.data(withJSONObject: envelope, options: [.sortedKeys])
        let request = try PushRequest.parse(bytes: Array(body), maximumChanges: 1000)
        let (outcome, _) = try await store.push(
            identity: identity, deviceID: device, request: request, requestHash: Array(SHA256.hash(data: body)), encode: PushAnswerJSON.encode)
        guard case .response(200, let bytes, _) = outcome, let json = try JSONSerialization.jsonObject(with: Data(bytes)) as? JSON else { return [:] }
        return json
    }
}
