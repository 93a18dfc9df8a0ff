import Foundation
import HTTPTypes
import HabitSyncAuth
import Hummingbird
import Logging
import Synchronization

/// Guards `/v1`: a request without a valid token gets a 401 whose code says what kind of
/// problem it is (`token_expired`, `unknown_issuer`, …: docs/identity.md), never which
/// tenants, users or keys exist; the details are in the server's log.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = HabitSyncRequestContext
    let authenticator: Authenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let identity = try await authenticator.identify(authorization: request.headers[.authorization], logger: context.logger).get()
        var context = context
        context.identity = identity
        context.logger[metadataKey: "tenant"] = .string(identity.tenantID.uuidString.lowercased())
        context.observedTenant.tenant = identity.tenantID.uuidString.lowercased()
        return try await next(request, context)
    }
}
