import Foundation
import HTTPTypes
import HabitSyncAuth
import HabitSyncDomain
import HabitSyncStore
import Hummingbird
import LibPQClient

/// An error as the HTTP API reports it: its kind (code, status and retry hint, from the error
/// table `APIErrorKind`), a message a person can act on, and the field it is about. Every error
/// response is `{"error": {"code", "message", …}}`.
public struct APIError: Error, Sendable, HTTPResponseError {
    public let kind: APIErrorKind
    public let message: String
    public var field: String?
    /// The methods the path supports, for a 405.
    public var allowedMethods: [String]?
    /// For `reset_required` and `account_restarted`: the epoch the device syncs in from now on.
    public var epoch: String?
    /// For `reset_required`: the device pushes again what it holds above this version.
    public var highWaterMark: Int64?
    /// For `tenant_limit_exceeded`: which of the tenant's limits (`TenantLimits.Kind`).
    public var limit: String?
    /// `Retry-After` when this error knows better than its kind (a tenant's token bucket).
    public var retryAfterSeconds: Int?

    public init(_ kind: APIErrorKind, _ message: String, field: String? = nil) {
        self.kind = kind
        self.message = message
        self.field = field
    }

    public var status: HTTPResponse.Status { kind.status }
    public var code: String { kind.code }

    public static func notFound(_ path: String) -> APIError {
        APIError(.notFound, "no route for \(path)")
    }

    /// A query parameter the route does not take.
    static func unknownParameter(_ name: Substring, accepted: String) -> APIError {
        let quoted = TextRules.quoted(String(name))
        return APIError(.invalidParameter, "unknown query parameter '\(quoted)' (\(accepted))", field: quoted)
    }

    public static let unavailable = APIError(.databaseUnreachable, "the database is unreachable; retry shortly")

    /// No usable token (none, not Bearer, not a JWT).
    public static let unauthorized = APIError(.unauthorized, "missing or invalid access token")

    public static let internalError = APIError(.internalError, "an unexpected error occurred; it has been logged")

    /// Maps any error to the API error the client sees: the one place where errors of the
    /// layers below become kinds of the error table. Database errors never leak SQL or
    /// parameters: what a retry can cure (a lost database, a timeout, a busy pool) is
    /// `unavailable` with `Retry-After`, anything else unexpected `internal` (and a bug, logged
    /// by the caller).
    public static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as PushRequestError:
            let kind: APIErrorKind =
                switch error.code {
                case .tooManyChanges, .tooLarge: .tooLarge
                case .malformedJSON: .malformedJSON
                case .malformedRequest: .malformedRequest
                case .unknownField: .unknownField
                case .invalidField: .invalidField
                case .unsupportedProtocolVersion: .unsupportedProtocolVersion
                }
            return APIError(kind, error.message, field: error.field)
        case let failure as AuthenticationFailure:
            // The code, and a message that says what to check; which issuer, kid or audience
            // went to the server's log only.
            return switch failure.code {
            case .unauthorized: .unauthorized
            case .tokenInvalid: APIError(.tokenInvalid, "the access token's claims cannot be used (no exp, not yet valid, or no usable user claim)")
            case .tokenExpired: APIError(.tokenExpired, "the access token has expired; get a new one from the identity provider")
            case .unknownIssuer: APIError(.unknownIssuer, "no tenant of this server accepts tokens of this issuer (or tenant id)")
            case .audienceMismatch: APIError(.audienceMismatch, "the access token's audience is not one this issuer's tenant accepts")
            case .unknownKey: APIError(.unknownKey, "the access token's key id is not among the issuer's current keys")
            case .algorithmNotAllowed: APIError(.algorithmNotAllowed, "the access token's signature algorithm is not accepted for this issuer or key")
            case .lifetimeTooLong: APIError(.lifetimeTooLong, "the access token lives longer than this issuer's tokens may")
            case .signatureInvalid: APIError(.signatureInvalid, "the access token's signature does not verify")
            }
        case is IssuerKeysUnavailable:
            return APIError(
                .identityProviderUnavailable,
                "the identity provider's keys cannot be fetched right now, so the token cannot be checked; retry shortly")
        case let error as StoreError:
            switch error.code {
            case .tooManyPushes: return APIError(.tooManyPushes, error.message)
            case .tooManyReads: return APIError(.tooManyReads, error.message)
            case .rangeTooLarge: return APIError(.rangeTooLarge, error.message, field: "from")
            case .accountErased: return APIError(.accountErased, error.message)
            // Tenant and issuer administration is the command line's; no route reaches it.
            case .tenantNotFound, .tenantExists, .noSigningKey, .issuerConflict, .issuerNotFound: return .internalError
            }
        case let error as SlowClientGuard.UploadTooSlow:
            let rule = error.rule == "body_timeout" ? "did not arrive within the body timeout" : "arrived slower than the minimum rate"
            return APIError(
                .uploadTooSlow,
                "the request body \(rule) (\(error.receivedBytes) bytes received); the connection is closed, send it again")
        case RequestBodyBudget.Refusal.busy:
            return APIError(.decodeBudgetFull, "the server is decoding as many large pushes as its memory budget allows; retry shortly")
        case RequestBodyBudget.Refusal.largerThanBudget:
            return APIError(.tooLarge, "the push would need more memory than this server decodes at once (--decode-budget); send fewer changes per batch")
        case let refusal as SyncEpochRefusal:
            var answer: APIError
            switch refusal.verdict {
            case .resetRequired(let highWaterMark):
                answer = APIError(
                    .resetRequired,
                    "the server holds this user's records up to version \(highWaterMark) only (a backup was restored, or the request is from another timeline); push again every record held above it, with the outbox, then pull without a cursor"
                )
                answer.highWaterMark = highWaterMark
            case .accountRestarted:
                answer = APIError(
                    .accountRestarted,
                    "the account this device synced with was erased and has started over; discard everything held of it, push none of it, and pull without a cursor")
            }
            answer.epoch = refusal.epoch?.text
            return answer
        case PullStore.Failure.cursorExpired:
            return APIError(.cursorExpired, "the cursor is older than the tombstone retention; pull again without a cursor", field: "cursor")
        case PullStore.Failure.cursorForOtherCollections:
            return APIError(.invalidParameter, "the cursor was issued for other collections; pull with the same collections, or without a cursor", field: "cursor")
        case PullStore.Failure.windowWidened:
            return APIError(
                .invalidParameter, "the cursor was issued for a later historyFrom; a window moves forward only: pull without a cursor to widen it",
                field: "historyFrom")
        case let error as PGError where error.isConnectionFailure || error.sqlState == .tooManyConnections:
            return .unavailable
        case let error as PGError
        where error.sqlState == .queryCanceled || error.sqlState == .lockNotAvailable
            || error.sqlState == .serializationFailure || error.sqlState == .deadlockDetected:
            return APIError(.databaseBusy, "the database is busy; retry shortly")
        case let error as PGError where !error.isDataError && error.kind == .server:
            // Rolled back whole; nothing was stored. A bug or a schema behind the binary is
            // logged by the caller; the device retries, as it would after a restart.
            return APIError(.databaseBusy, "the request could not be completed and nothing of it was applied; retry it")
        case let error as PGPool.LeaseTimeout:
            return APIError(.databaseBusy, "every database connection is busy (waited \(error.waited)); retry shortly")
        case let error as HTTPError:
            switch error.status {
            case .notFound: return APIError(.notFound, "no such route")
            case .methodNotAllowed: return APIError(.methodNotAllowed, "method not allowed on this route")
            case .contentTooLarge: return APIError(.tooLarge, "the request body is too large")
            case .badRequest: return APIError(.malformedRequest, error.body ?? "malformed request")
            default:
                return error.status.code < 500 ? APIError(.badRequest, error.body ?? error.status.reasonPhrase) : .internalError
            }
        default:
            return .internalError
        }
    }

    /// `{"error": {…}}`, its fields in name order.
    public var body: Data {
        var error = JSONObjectWriter()
        error.add("code", code)
        if let epoch { error.add("epoch", epoch) }
        if let field { error.add("field", field) }
        if let highWaterMark { error.add("highWaterMark", highWaterMark) }
        if let limit { error.add("limit", limit) }
        error.add("message", message)
        var body = JSONObjectWriter()
        body.add("error", json: error.json)
        return Data(body.json.utf8)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfterSeconds = retryAfterSeconds ?? kind.retryAfterSeconds { headers[.retryAfter] = String(retryAfterSeconds) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        if let allowedMethods { headers[.allow] = allowedMethods.joined(separator: ", ") }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
