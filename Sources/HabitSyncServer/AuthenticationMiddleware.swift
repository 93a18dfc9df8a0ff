import Foundation
import HTTPTypes
import HabitSyncAuth
import Hummingbird
import Logging

/// A request context that carries the caller's verified identity past authentication.
public struct HabitSyncRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: VerifiedIdentity?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
    }
}

/// Guards `/v1`: a request without a valid token gets the same bare 401 whatever was wrong,
/// so nothing is learnt about which tenants, users or keys exist.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = HabitSyncRequestContext
    let authenticator: Authenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let identity = try await authenticator.authenticate(authorization: request.headers[.authorization], logger: context.logger) else {
            throw APIError.unauthorized
        }
        var context = context
        context.identity = identity
        context.logger[metadataKey: "tenant"] = .string(identity.tenantID.uuidString.lowercased())
        return try await next(request, context)
    }
}
