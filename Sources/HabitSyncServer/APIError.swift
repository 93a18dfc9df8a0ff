import Foundation
import HTTPTypes
import HabitSyncAuth
import Hummingbird
import HabitSyncDomain
import HabitSyncStore
import LibPQClient

/// An error as the HTTP API reports it: a stable machine-readable code, a message a person
/// can act on, and the status. Every error response is `{"error": {"code", "message", …}}`.
/// This is the one place where errors become HTTP statuses.
public struct APIError: Error, Sendable, HTTPResponseError {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    public var field: String?
    public var retryAfterSeconds: Int?
    /// The methods the path supports, for a 405.
    public var allowedMethods: [String]?
    /// For `reset_required` and `account_restarted`: the epoch the device syncs in from now on.
    public var epoch: String?
    /// For `reset_required`: the device pushes again what it holds above this version.
    public var highWaterMark: Int64?

    public init(status: HTTPResponse.Status, code: String, message: String, field: String? = nil, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retryAfterSeconds = retryAfterSeconds
    }

    public static func notFound(_ path: String) -> APIError {
        APIError(status: .notFound, code: "not_found", message: "no route for \(path)")
    }

    public static let unavailable = APIError(
        status: .serviceUnavailable, code: "unavailable",
        message: "the database is unreachable; retry shortly", retryAfterSeconds: 2)

    /// No usable token (none, not Bearer, not a JWT).
    public static let unauthorized = APIError(status: .unauthorized, code: "unauthorized", message: "missing or invalid access token")

    public static let internalError = APIError(
        status: .internalServerError, code: "internal", message: "an unexpected error occurred; it has been logged")

    /// Maps any error to the API error the client sees: the one place where errors of the
    /// layers below become statuses. Database errors never leak SQL or parameters: what a retry
    /// can cure (a lost database, a timeout, a busy pool) is 503 with `Retry-After`, anything
    /// else unexpected is 500 (and a bug, logged by the caller).
    public static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as PushRequestError:
            switch error.code {
            case .tooManyChanges, .tooLarge:
                return APIError(status: .contentTooLarge, code: "too_large", message: error.message, field: error.field)
            case .malformedJSON, .malformedRequest, .unknownField, .invalidField, .unsupportedProtocolVersion:
                return APIError(status: .badRequest, code: error.code.rawValue, message: error.message, field: error.field)
            }
        case let failure as AuthenticationFailure:
            // The code, and a message that says what to check; which issuer, kid or audience
            // went to the server's log only.
            let message: String = switch failure.code {
            case .unauthorized: "missing or invalid access token"
            case .tokenInvalid: "the access token's claims cannot be used (no exp, not yet valid, or no usable user claim)"
            case .tokenExpired: "the access token has expired; get a new one from the identity provider"
            case .unknownIssuer: "no tenant of this server accepts tokens of this issuer (or tenant id)"
            case .audienceMismatch: "the access token's audience is not one this issuer's tenant accepts"
            case .unknownKey: "the access token's key id is not among the issuer's current keys"
            case .algorithmNotAllowed: "the access token's signature algorithm is not accepted for this issuer or key"
            case .lifetimeTooLong: "the access token lives longer than this issuer's tokens may"
            case .signatureInvalid: "the access token's signature does not verify"
            }
            return APIError(status: .unauthorized, code: failure.code.rawValue, message: message)
        case is IssuerKeysUnavailable:
            return APIError(status: .serviceUnavailable, code: "identity_provider_unavailable",
                            message: "the identity provider's keys cannot be fetched right now, so the token cannot be checked; retry shortly", retryAfterSeconds: 5)
        case let error as StoreError:
            switch error.code {
            case .tooManyPushes:
                return APIError(status: .tooManyRequests, code: "too_many_requests", message: error.message, retryAfterSeconds: 1)
            case .tooManyReads:
                return APIError(status: .tooManyRequests, code: error.code.rawValue, message: error.message, retryAfterSeconds: 1)
            case .rangeTooLarge:
                return APIError(status: .badRequest, code: error.code.rawValue, message: error.message, field: "from")
            case .accountErased:
                return APIError(status: .gone, code: error.code.rawValue, message: error.message)
            case .tenantNotFound:
                return APIError(status: .notFound, code: error.code.rawValue, message: error.message)
            case .tenantExists:
                return APIError(status: .conflict, code: error.code.rawValue, message: error.message)
            case .noSigningKey, .issuerConflict:
                return APIError(status: .conflict, code: error.code.rawValue, message: error.message)
            case .issuerNotFound:
                return APIError(status: .notFound, code: error.code.rawValue, message: error.message)
            }
        case let error as SlowClientGuard.UploadTooSlow:
            let rule = error.rule == "body_timeout" ? "did not arrive within the body timeout" : "arrived slower than the minimum rate"
            return APIError(status: .requestTimeout, code: "upload_too_slow",
                            message: "the request body \(rule) (\(error.receivedBytes) bytes received); the connection is closed, send it again")
        case RequestBodyBudget.Refusal.busy:
            return APIError(status: .serviceUnavailable, code: "busy", message: "the server is decoding as many large pushes as its memory budget allows; retry shortly", retryAfterSeconds: 1)
        case RequestBodyBudget.Refusal.largerThanBudget:
            return APIError(status: .contentTooLarge, code: "too_large", message: "the push would need more memory than this server decodes at once (--decode-budget); send fewer changes per batch")
        case let refusal as SyncEpochRefusal:
            var answer: APIError
            switch refusal.verdict {
            case .resetRequired(let highWaterMark):
                answer = APIError(status: .gone, code: "reset_required",
                                  message: "the server holds this user's records up to version \(highWaterMark) only (a backup was restored, or the request is from another timeline); push again every record held above it, with the outbox, then pull without a cursor")
                answer.highWaterMark = highWaterMark
            case .accountRestarted:
                answer = APIError(status: .gone, code: "account_restarted",
                                  message: "the account this device synced with was erased and has started over; discard everything held of it, push none of it, and pull without a cursor")
            }
            answer.epoch = refusal.epoch?.text
            return answer
        case PullStore.Failure.cursorExpired:
            return APIError(status: .gone, code: "cursor_expired", message: "the cursor is older than the tombstone retention; pull again without a cursor", field: "cursor")
        case PullStore.Failure.cursorForOtherCollections:
            return APIError(status: .badRequest, code: "invalid_parameter", message: "the cursor was issued for other collections; pull with the same collections, or without a cursor", field: "cursor")
        case let error as PGError where error.isConnectionFailure || error.sqlState == .tooManyConnections:
            return .unavailable
        case let error as PGError where error.sqlState == .queryCanceled || error.sqlState == .lockNotAvailable
            || error.sqlState == .serializationFailure || error.sqlState == .deadlockDetected:
            return APIError(status: .serviceUnavailable, code: "unavailable", message: "the database is busy; retry shortly", retryAfterSeconds: 1)
        case let error as PGError where !error.isDataError && error.kind == .server:
            // Rolled back whole; nothing was stored. A bug or a schema behind the binary is
            // logged by the caller; the device retries, as it would after a restart.
            _ = error
            return APIError(status: .serviceUnavailable, code: "unavailable", message: "the request could not be completed and nothing of it was applied; retry it", retryAfterSeconds: 1)
        case let error as PGPool.LeaseTimeout:
            return APIError(status: .serviceUnavailable, code: "unavailable", message: "every database connection is busy (waited \(error.waited)); retry shortly", retryAfterSeconds: 1)
        case let error as HTTPError:
            switch error.status {
            case .notFound: return APIError(status: .notFound, code: "not_found", message: "no such route")
            case .methodNotAllowed: return APIError(status: .methodNotAllowed, code: "method_not_allowed", message: "method not allowed on this route")
            case .contentTooLarge: return APIError(status: .contentTooLarge, code: "too_large", message: "the request body is too large")
            case .badRequest: return APIError(status: .badRequest, code: "malformed_request", message: error.body ?? "malformed request")
            default:
                return APIError(status: error.status, code: error.status.code < 500 ? "bad_request" : "internal", message: error.body ?? error.status.reasonPhrase)
            }
        default:
            return .internalError
        }
    }

    public var body: Data {
        var object: [String: Any] = ["code": code, "message": message]
        if let field { object["field"] = field }
        if let epoch { object["epoch"] = epoch }
        if let highWaterMark { object["highWaterMark"] = highWaterMark }
        return (try? JSONSerialization.data(withJSONObject: ["error": object], options: [.sortedKeys])) ?? Data()
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfterSeconds { headers[.retryAfter] = String(retryAfterSeconds) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if let allowedMethods { headers[.allow] = allowedMethods.joined(separator: ", ") }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
