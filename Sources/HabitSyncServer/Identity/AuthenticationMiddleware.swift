import Foundation
import HTTPTypes
import HabitSyncAuth
import Hummingbird
import LibPQClient
import Logging
import Synchronization
import Tracing

/// Guards `/v1`: a request without a valid token gets a 401 whose code says what kind of
/// problem it is (`token_expired`, `unknown_issuer`, …: docs/identity.md), never which
/// tenants, users or keys exist; the details are in the server's log.
///
/// Traced, it is the `authenticate` span: the tenant it verified (an id, not a person), and the
/// user only where the operator turned `--trace-user-ids` on.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = HabitSyncRequestContext
    let authenticator: Authenticator
    var traceUserIDs = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let outcome = try await withSpanWhenTraced("authenticate") { span in
            let outcome = try await authenticator.identify(authorization: request.headers[.authorization], logger: context.logger)
            switch outcome {
            case .success(let identity):
                span?.attributes["habitsync.tenant_id"] = identity.tenantID.uuidString.lowercased()
                if traceUserIDs { span?.attributes["enduser.id"] = identity.userID }
            case .failure(let failure):
                span?.attributes["habitsync.error_code"] = APIError.from(failure).code
            }
            return outcome
        }
        let identity = try outcome.get()
        var context = context
        context.identity = identity
        context.logger[metadataKey: "tenant"] = .string(identity.tenantID.uuidString.lowercased())
        context.observedTenant.tenant = identity.tenantID.uuidString.lowercased()
        return try await next(request, context)
    }
}
