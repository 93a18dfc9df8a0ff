import Foundation

/// Why a sync stopped, for the app (or its scheduler) to act on.
public enum SyncError: Error, Sendable, Equatable {
    /// The server is busy (`503`) or this user sends too much (`429`): try again after this
    /// many seconds (with jitter, and longer each time it happens again).
    case retryLater(seconds: Double)
    /// The token was refused (`401`): refresh it, or sign in again. `code` says why
    /// (`token_expired`, `audience_mismatch`, … docs/identity.md); nil when the body had none.
    case unauthorized(code: String?)
    /// The user's account was erased (`410 account_erased`, `DELETE /v1/account` from this or
    /// another device): stop syncing, erase the local store (`LocalStore.erase(path:)`) and
    /// sign out. Retrying never helps.
    case accountErased
    /// Any other answer the device cannot fix by retrying (`400`, `409`, `413` …), with the
    /// server's error code.
    case refused(status: Int, code: String?)
}
