/// A store failure the caller can act on, with a stable code.
public struct StoreError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The wire code each stands for is chosen once, at the edge (`APIErrorKind`).
    public enum Code: Sendable {
        case tenantExists
        case tenantNotFound
        case noSigningKey
        /// The tenant already accepts this issuer, or another tenant accepts an audience of it.
        case issuerConflict
        case issuerNotFound
        /// One user has too many pushes waiting in this process.
        case tooManyPushes
        /// The user's account was erased: nothing of theirs is read or stored any more.
        case accountErased
        /// A statistics range holds more habit-days than one request computes.
        case rangeTooLarge
        /// The user already runs as many statistics or exports as allowed at once.
        case tooManyReads
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
