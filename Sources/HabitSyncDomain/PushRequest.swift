import Foundation

/// A push body, checked as an envelope: `{"batchId": UUID, "changes": [object…]}`. Problems
/// here make the whole request a 400; problems inside one change only reject that change.
public struct PushRequest: Sendable {
    public let batchId: UUID
    public let changes: [[String: JSONValue]]

    public static func parse(_ body: Data, maximumChanges: Int) throws(PushRequestError) -> PushRequest {
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw PushRequestError(code: "malformed_json", field: nil, message: "the body is not valid JSON")
        }
        guard case .object(let envelope) = value else {
            throw PushRequestError(code: "malformed_request", field: nil, message: "the body must be a JSON object with batchId and changes")
        }
        if let unknown = envelope.keys.filter({ $0 != "batchId" && $0 != "changes" }).sorted().first {
            throw PushRequestError(code: "unknown_field", field: unknown, message: "\(unknown) is not a field of a push request")
        }
        guard case .string(let batchText)? = envelope["batchId"], let batchId = UUID(uuidString: batchText) else {
            throw PushRequestError(code: "invalid_field", field: "batchId", message: "batchId must be a UUID")
        }
        guard case .array(let items)? = envelope["changes"] else {
            throw PushRequestError(code: "invalid_field", field: "changes", message: "changes must be an array")
        }
        guard items.count <= maximumChanges else {
            throw PushRequestError(code: "too_many_changes", field: "changes", message: "a batch holds at most \(maximumChanges) changes, got \(items.count); split it", status: 413)
        }
        var changes: [[String: JSONValue]] = []
        changes.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard case .object(let change) = item else {
                throw PushRequestError(code: "invalid_field", field: "changes[\(index)]", message: "changes[\(index)] must be an object")
            }
            changes.append(change)
        }
        return PushRequest(batchId: batchId, changes: changes)
    }
}

/// Why a whole push request was refused (4xx, nothing applied).
public struct PushRequestError: Error, Sendable, Equatable {
    public let code: String
    public let field: String?
    public let message: String
    public var status: Int = 400
}
