import HTTPTypes

/// The error table: every error the HTTP API answers, with its code, its status and its retry
/// hint (`Retry-After`, seconds). This is the only place an error's status is chosen; handlers
/// throw `APIError(kind, message)` and `APIError.from` maps the layers' own errors to a kind.
///
/// A code may name several kinds when a device does the same thing about them but the server
/// knows when to come back differently (`unavailable` after a lost database or a busy one).
/// `openapi.yaml` lists the codes (`Error.code`); `ErrorTableTests` checks both lists agree.
public enum APIErrorKind: CaseIterable, Sendable {
    // The request as a whole cannot be read: nothing was applied.
    case malformedJSON, malformedRequest, unknownField, invalidField, unsupportedProtocolVersion
    case missingDeviceID, invalidDeviceID, invalidEncoding, invalidParameter, rangeTooLarge
    /// A 4xx the HTTP framework raised that has no kind of its own.
    case badRequest
    // The access token (docs/identity.md).
    case unauthorized, tokenInvalid, tokenExpired, unknownIssuer, audienceMismatch, unknownKey
    case algorithmNotAllowed, lifetimeTooLong, signatureInvalid
    case notFound, methodNotAllowed, uploadTooSlow, batchConflict
    case accountErased, cursorExpired, resetRequired, accountRestarted
    case tooLarge, unsupportedMediaType, unsupportedEncoding
    /// One user's pushes waiting in this process; their statistics and exports; their streams.
    case tooManyPushes, tooManyReads, tooManyStreams
    /// A limit of the user's tenant (`tenant set-limits`): named in the error's `limit`, with
    /// the seconds until it admits the request again.
    case tenantLimit
    case internalError
    /// The database: gone (a reconnect takes a moment), or busy or rolled back (retry at once).
    case databaseUnreachable, databaseBusy
    /// The memory budget for decoding pushes; the identity provider's keys.
    case decodeBudgetFull, identityProviderUnavailable

    public var code: String { entry.code }
    public var status: HTTPResponse.Status { entry.status }
    public var retryAfterSeconds: Int? { entry.retryAfter }

    private var entry: (code: String, status: HTTPResponse.Status, retryAfter: Int?) {
        switch self {
        case .malformedJSON: ("malformed_json", .badRequest, nil)
        case .malformedRequest: ("malformed_request", .badRequest, nil)
        case .unknownField: ("unknown_field", .badRequest, nil)
        case .invalidField: ("invalid_field", .badRequest, nil)
        case .unsupportedProtocolVersion: ("unsupported_protocol_version", .badRequest, nil)
        case .missingDeviceID: ("missing_device_id", .badRequest, nil)
        case .invalidDeviceID: ("invalid_device_id", .badRequest, nil)
        case .invalidEncoding: ("invalid_encoding", .badRequest, nil)
        case .invalidParameter: ("invalid_parameter", .badRequest, nil)
        case .rangeTooLarge: ("range_too_large", .badRequest, nil)
        case .badRequest: ("bad_request", .badRequest, nil)
        case .unauthorized: ("unauthorized", .unauthorized, nil)
        case .tokenInvalid: ("token_invalid", .unauthorized, nil)
        case .tokenExpired: ("token_expired", .unauthorized, nil)
        case .unknownIssuer: ("unknown_issuer", .unauthorized, nil)
        case .audienceMismatch: ("audience_mismatch", .unauthorized, nil)
        case .unknownKey: ("unknown_key", .unauthorized, nil)
        case .algorithmNotAllowed: ("algorithm_not_allowed", .unauthorized, nil)
        case .lifetimeTooLong: ("lifetime_too_long", .unauthorized, nil)
        case .signatureInvalid: ("signature_invalid", .unauthorized, nil)
        case .notFound: ("not_found", .notFound, nil)
        case .methodNotAllowed: ("method_not_allowed", .methodNotAllowed, nil)
        case .uploadTooSlow: ("upload_too_slow", .requestTimeout, nil)
        case .batchConflict: ("batch_conflict", .conflict, nil)
        case .accountErased: ("account_erased", .gone, nil)
        case .cursorExpired: ("cursor_expired", .gone, nil)
        case .resetRequired: ("reset_required", .gone, nil)
        case .accountRestarted: ("account_restarted", .gone, nil)
        case .tooLarge: ("too_large", .contentTooLarge, nil)
        case .unsupportedMediaType: ("unsupported_media_type", .unsupportedMediaType, nil)
        case .unsupportedEncoding: ("unsupported_encoding", .unsupportedMediaType, nil)
        case .tooManyPushes: ("too_many_requests", .tooManyRequests, 1)
        case .tooManyReads: ("too_many_requests", .tooManyRequests, 1)
        // A stream slot frees when another stream of the user ends: not within a second.
        case .tooManyStreams: ("too_many_requests", .tooManyRequests, 5)
        // Every tenant limit, the storage one too: the device's outbox waits and retries (a 5xx
        // would say the server failed; a 403 would tell the SDK to stop trying).
        case .tenantLimit: ("tenant_limit_exceeded", .tooManyRequests, 1)
        case .internalError: ("internal", .internalServerError, nil)
        case .databaseUnreachable: ("unavailable", .serviceUnavailable, 2)
        case .databaseBusy: ("unavailable", .serviceUnavailable, 1)
        case .decodeBudgetFull: ("busy", .serviceUnavailable, 1)
        case .identityProviderUnavailable: ("identity_provider_unavailable", .serviceUnavailable, 5)
        }
    }

    /// `/readyz` while the server cannot serve (not an error body: its own `status` object).
    public static let notReady: (status: HTTPResponse.Status, retryAfterSeconds: Int) = (.serviceUnavailable, 2)

    /// Every code the API answers, each once.
    public static var codes: Set<String> { Set(allCases.map(\.code)) }
}
