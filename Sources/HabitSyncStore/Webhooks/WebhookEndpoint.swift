import Foundation
import HabitSyncDomain

/// One of a tenant's webhook endpoints (`webhook_endpoints`, migration 0046), as admins see it:
/// never its secret.
public struct WebhookEndpoint: Sendable, Equatable {
    public let id: UUID
    public let url: String
    /// Nil: every collection.
    public let collections: [SyncCollection]?
    public let includeRecords: Bool
    public let maxAttempts: Int
    public let paused: Bool
    public let consecutiveFailures: Int
    public let createdAt: Date
    /// Deliveries waiting, delivered and dead.
    public var pending: Int64 = 0
    public var delivered: Int64 = 0
    public var dead: Int64 = 0
}

/// What an admin asks for in `tenant add-webhook`, checked before anything is stored: the same
/// rules as the table's constraints (`WebhookEndpointRequestTests` holds the two together).
public struct WebhookEndpointRequest: Sendable, Equatable {
    public let url: String
    public let collections: [SyncCollection]?
    public let includeRecords: Bool
    public let secret: [UInt8]
    public let maxAttempts: Int

    public static let maximumURLBytes = 2048
    public static let secretBytes = 24...64
    public static let attempts = 1...100
    public static let defaultMaximumAttempts = 12
    /// Standard Webhooks' spelling of a secret: this prefix, then the key in base64.
    public static let secretPrefix = "whsec_"

    /// Why a request is refused: the option it names and the rule.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let option: String
        public let rule: String
        public var description: String { "\(option): \(rule)" }
    }

    public init(url: String, collections: [String]?, includeRecords: Bool, secret: String, maxAttempts: Int = defaultMaximumAttempts) throws(Refusal) {
        self.url = try Self.checkedURL(url)
        if let collections {
            guard !collections.isEmpty else { throw Refusal(option: "--collections", rule: "names no collection") }
            var known: [SyncCollection] = []
            for name in collections {
                guard let collection = SyncCollection(rawValue: name) else {
                    throw Refusal(option: "--collections", rule: "\(JSONText.string(String(name.prefix(64)))) is not a collection (\(SyncCollection.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                if !known.contains(collection) { known.append(collection) }
            }
            self.collections = known
        } else {
            self.collections = nil
        }
        self.includeRecords = includeRecords
        self.secret = try Self.decodedSecret(secret)
        guard Self.attempts.contains(maxAttempts) else { throw Refusal(option: "--max-attempts", rule: "must be from \(Self.attempts.lowerBound) to \(Self.attempts.upperBound)") }
        self.maxAttempts = maxAttempts
    }

    /// `https://…` (or `http://` for a loopback test receiver, which the server sends to only
    /// when `--webhook-loopback-http allow`): at most 2048 bytes of printable ASCII (a host in
    /// punycode, a path percent-encoded), as the table's check says, and a host, no credentials.
    public static func checkedURL(_ url: String) throws(Refusal) -> String {
        guard url.utf8.count <= maximumURLBytes else { throw Refusal(option: "--url", rule: "longer than \(maximumURLBytes) bytes") }
        guard url.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw Refusal(option: "--url", rule: "holds a space, a control character or a character outside ASCII (use punycode and percent-encoding)")
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host, !host.isEmpty,
            url.hasPrefix("https://") || url.hasPrefix("http://"), scheme == "https" || scheme == "http"
        else { throw Refusal(option: "--url", rule: "not an absolute https:// URL with a host") }
        guard components.user == nil, components.password == nil else { throw Refusal(option: "--url", rule: "carries credentials") }
        return url
    }

    /// `whsec_` and the base64 of 24 to 64 bytes (a file's trailing newline is not part of it).
    public static func decodedSecret(_ text: String) throws(Refusal) -> [UInt8] {
        var text = Substring(text)
        while let last = text.last, last == "\n" || last == "\r" { text = text.dropLast() }
        guard text.hasPrefix(secretPrefix), let key = Data(base64Encoded: String(text.dropFirst(secretPrefix.count))) else {
            throw Refusal(option: "--secret-from-file", rule: "the file must hold whsec_ followed by the key in base64")
        }
        guard secretBytes.contains(key.count) else {
            throw Refusal(option: "--secret-from-file", rule: "the key must be \(secretBytes.lowerBound) to \(secretBytes.upperBound) bytes (it is \(key.count))")
        }
        return Array(key)
    }
}
