import HabitSyncAuth
import HabitSyncServer
import Logging

extension Authenticator {
    /// The identity, or `nil` for any refusal: what the tests ask. (The server asks `identify`,
    /// which says why.)
    public func authenticate(authorization: String?, logger: Logger) async throws -> VerifiedIdentity? {
        if case .success(let identity) = try await identify(authorization: authorization, logger: logger) { return identity }
        return nil
    }
}
