import Crypto
import Foundation

/// The signature of a webhook delivery, as the Standard Webhooks specification has it: HMAC-SHA256
/// with the endpoint's secret over `id.timestamp.body`, sent as `webhook-signature: v1,<base64>`
/// beside `webhook-id` and `webhook-timestamp` (Unix seconds). A receiver recomputes it and
/// refuses a timestamp far from its clock (a replay). docs/operations.md shows the check.
public enum WebhookSignature {
    public static func sign(id: String, timestamp: Int64, body: [UInt8], secret: [UInt8]) -> String {
        var message = Array("\(id).\(timestamp).".utf8)
        message += body
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret))
        return "v1," + Data(mac).base64EncodedString()
    }

    /// The three headers, as header lines.
    public static func headers(id: String, timestamp: Int64, body: [UInt8], secret: [UInt8]) -> [String] {
        ["webhook-id: \(id)", "webhook-timestamp: \(timestamp)", "webhook-signature: \(sign(id: id, timestamp: timestamp, body: body, secret: secret))"]
    }

    /// Whether `signatures` (the header's value: space-separated `v1,<base64>` entries, as a
    /// receiver gets it during a secret's rotation) holds a valid signature of the message.
    /// For tests and for receivers written in Swift.
    public static func verify(id: String, timestamp: Int64, body: [UInt8], secret: [UInt8], signatures: String) -> Bool {
        var message = Array("\(id).\(timestamp).".utf8)
        message += body
        for entry in signatures.split(separator: " ") {
            guard entry.hasPrefix("v1,"), let mac = Data(base64Encoded: String(entry.dropFirst(3))) else { continue }
            if HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: SymmetricKey(data: secret)) { return true }
        }
        return false
    }
}
