/// A store failure the caller can act on, with a stable code.
public struct StoreError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        case tenantExists = "tenant_exists"
        case tenantNotFound = "tenant_not_found"
        case noSigningKey = "no_signing_key"
        /// The tenant already accepts this issuer, or another tenant accepts an audience of it.
        case issuerConflict = "issuer_conflict"
        case issuerNotFound = "issuer_not_found"
        /// One user has too many pushes waiting in this process.
        case tooManyPushes = "too_many_pushes"
        /// The user's account was erased: nothing of theirs is read or stored any more.
        case accountErased = "account_erased"
        /// A statistics range holds more habit-days than one request computes.
        case rangeTooLarge = "range_too_large"
        /// The user already runs as many statistics or exports as allowed at once.
        case tooManyReads = "too_many_requests"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static let erasedAccount = StoreError(.accountErased, "this account was erased; sign in to a new account to sync again")
}
