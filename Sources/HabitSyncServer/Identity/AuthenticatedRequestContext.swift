import HabitSyncAuth
import Hummingbird

/// The context of every `/v1` route: the request after `AuthenticationMiddleware`, with the
/// caller's verified identity, which is never missing here. Handlers read the scope of every
/// query from it and from nowhere else.
public struct AuthenticatedRequestContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let identity: VerifiedIdentity

    /// Fails closed: a route reached without the middleware's identity answers 401.
    public init(context: HabitSyncRequestContext) throws {
        guard let identity = context.identity else { throw APIError.unauthorized }
        self.coreContext = context.coreContext
        self.identity = identity
    }
}
