import Foundation

/// A push body, checked as an envelope: `{"batchId": UUID, "protocolVersion"?: 1|2,
/// "epoch"?: text, "changes": [object…]}`. Problems here refuse the whole request (400, or 413
/// for a body past the parser's limits, `.tooLarge`); problems inside one change only reject
/// that change.
public struct PushRequest: Sendable {
    /// The protocol versions this build serves. 1: whole-record upserts (no `protocolVersion`
    /// field). 2: adds `increment` to daily progress changes.
    public static let supportedVersions = 1...2

    public let batchId: UUID
    /// 1 when the body does not say.
    public let protocolVersion: Int
    /// The epoch the device last synced in (`SyncEpoch`); nil from a device that never synced.
    public let epoch: SyncEpoch?
    public let changes: [[String: JSONValue]]

    public static func parse(bytes body: [UInt8], maximumChanges: Int) throws(PushRequestError) -> PushRequest {
        let value: JSONValue
        var limits = JSONParser.Limits()
        limits.arrayItems = max(limits.arrayItems, maximumChanges)
        do {
            value = try JSONParser.parse(bytes: body, limits: limits)
        } catch {
            if let limit = error.limit {
                throw PushRequestError(code: .tooLarge, field: nil, message: "the body holds \(limit); send fewer changes per batch")
            }
            throw PushRequestError(code: .malformedJSON, field: nil, message: "the body is not valid JSON (at byte \(error.offset))")
        }
        guard case .object(let envelope) = value else {
            throw PushRequestError(code: .malformedRequest, field: nil, message: "the body must be a JSON object with batchId and changes")
        }
        if let unknown = envelope.keys.filter({ !["batchId", "protocolVersion", "epoch", "changes"].contains($0) }).sorted().first {
            let name = TextRules.quoted(unknown)
            throw PushRequestError(code: .unknownField, field: name, message: "\(name) is not a field of a push request")
        }
        guard case .string(let batchText)? = envelope["batchId"], let batchId = UUID(uuidString: batchText) else {
            throw PushRequestError(code: .invalidField, field: "batchId", message: "batchId must be a UUID")
        }
        // Checked before anything else of the batch: a client newer than this server learns so
        // before a single change is applied under rules it did not mean.
        var protocolVersion = 1
        if let version = envelope["protocolVersion"] {
            guard case .number(let number) = version, number.isFinite, number.rounded() == number, abs(number) < 1e9 else {
                throw PushRequestError(code: .invalidField, field: "protocolVersion", message: "protocolVersion must be a whole number")
            }
            guard supportedVersions.contains(Int(number)) else {
                throw PushRequestError(
                    code: .unsupportedProtocolVersion, field: "protocolVersion",
                    message: "this server speaks protocol versions \(supportedVersions.lowerBound)–\(supportedVersions.upperBound), not \(Int(number)); nothing of this batch was applied")
            }
            protocolVersion = Int(number)
        }
        var epoch: SyncEpoch?
        if let value = envelope["epoch"] {
            guard case .string(let text) = value, let parsed = SyncEpoch(text) else {
                throw PushRequestError(code: .invalidField, field: "epoch", message: "epoch must be the epoch a pull or push answered (hexadecimal digits, as sent)")
            }
            epoch = parsed
        }
        guard case .array(let items)? = envelope["changes"] else {
            throw PushRequestError(code: .invalidField, field: "changes", message: "changes must be an array")
        }
        guard items.count <= maximumChanges else {
            throw PushRequestError(code: .tooManyChanges, field: "changes", message: "a batch holds at most \(maximumChanges) changes, got \(items.count); split it")
        }
        var changes: [[String: JSONValue]] = []
        changes.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard case .object(let change) = item else {
                throw PushRequestError(code: .invalidField, field: "changes[\(index)]", message: "changes[\(index)] must be an object")
            }
            changes.append(change)
        }
        return PushRequest(batchId: batchId, protocolVersion: protocolVersion, epoch: epoch, changes: changes)
    }
}

/// Why a whole push request was refused: nothing of it is applied. The HTTP layer maps each
/// code to a status.
public struct PushRequestError: Error, Sendable, Equatable {
    /// The wire code each stands for is chosen once, at the edge (`APIErrorKind`).
    public enum Code: Sendable {
        case malformedJSON
        case malformedRequest
        case unknownField
        case invalidField
        /// More changes than the server takes in one batch.
        case tooManyChanges
        /// A document whose tree would exceed the parser's limits.
        case tooLarge
        /// A `protocolVersion` this server does not serve.
        case unsupportedProtocolVersion
    }

    public let code: Code
    public let field: String?
    public let message: String
}
