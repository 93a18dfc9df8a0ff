import Foundation
import HabitSyncDomain

/// What a push that stored something tells every replica, through PostgreSQL's `NOTIFY` on
/// `channel` (sent by the push's own transaction, so delivered only if it commits): whose
/// records changed, up to which `serverVersion`, in which collections, from which device.
/// Names no record and carries no content.
public struct ChangeNotice: Sendable, Equatable {
    public static let channel = "habitsync_changes"

    public let tenantID: UUID
    public let userID: String
    public let serverVersion: Int64
    public let deviceID: String
    public let collections: [SyncCollection]
    /// The push's trace (`TraceParent`), when it was traced: the listeners' spans continue it.
    public let traceParent: String?

    /// The longest `traceParent` kept (W3C's version 00 is 55 characters).
    static let maximumTraceParentLength = 100

    public init(tenantID: UUID, userID: String, serverVersion: Int64, deviceID: String, collections: [SyncCollection], traceParent: String? = nil) {
        self.tenantID = tenantID
        self.userID = userID
        self.serverVersion = serverVersion
        self.deviceID = deviceID
        self.collections = collections
        self.traceParent = traceParent.flatMap { $0.count <= Self.maximumTraceParentLength ? $0 : nil }
    }

    /// The payload: JSON, well under PostgreSQL's 8000-byte limit (a user id is at most 255
    /// characters, a device id 100, collections a dozen names).
    /// A replica of an earlier release reads the fields it knows and ignores `p`.
    public var payload: String {
        var fields: [String: JSONValue] = [
            "t": .string(tenantID.uuidString.lowercased()), "u": .string(userID), "v": .number(Double(serverVersion)),
            "d": .string(deviceID), "c": .array(collections.map { .string($0.rawValue) }),
        ]
        if let traceParent { fields["p"] = .string(traceParent) }
        return JSONValue.object(fields).jsonText
    }

    public init?(payload: String) {
        guard case .object(let fields)? = try? JSONParser.parse(bytes: Array(payload.utf8)),
            case .string(let tenant)? = fields["t"], let tenantID = UUID(uuidString: tenant),
            case .string(let user)? = fields["u"], case .number(let version)? = fields["v"], let serverVersion = Int64(exactly: version),
            case .string(let device)? = fields["d"], case .array(let names)? = fields["c"]
        else { return nil }
        self.init(
            tenantID: tenantID, userID: user, serverVersion: serverVersion, deviceID: device,
            // A collection this build does not know (a newer replica's) is left out of the hint.
            collections: names.compactMap { if case .string(let name) = $0 { SyncCollection(rawValue: name) } else { nil } },
            traceParent: { if case .string(let parent)? = fields["p"] { parent } else { nil } }())
    }
}
