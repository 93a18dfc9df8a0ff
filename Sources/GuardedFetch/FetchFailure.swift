/// Why a fetch gave no body. The description is for logs; it never carries the body.
public enum FetchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL itself is not allowed (scheme, host, credentials, length).
    case urlRefused(String)
    /// The name resolved only to addresses the policy refuses.
    case addressRefused
    case tooLarge(limit: Int)
    case timedOut
    case transferFailed(String)
    /// An answer other than 200.
    case status(Int)

    public var description: String {
        switch self {
        case .urlRefused(let why): "URL refused: \(why)"
        case .addressRefused: "the host resolves to a private or loopback address, which is not allowed"
        case .tooLarge(let limit): "the answer is larger than \(limit) bytes"
        case .timedOut: "timed out"
        case .transferFailed(let message): "transfer failed: \(message)"
        case .status(let status): "HTTP status \(status)"
        }
    }
}
