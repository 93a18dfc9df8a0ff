import Foundation
import HTTPTypes
import HabitSyncAuth
import Hummingbird
import Logging
import Synchronization

/// A request context that carries the caller's verified identity past authentication.
public struct HabitSyncRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: VerifiedIdentity?
    /// Shared with the outer middleware (contexts are copied inward): lets the access-log line
    /// name the tenant that authentication found.
    let observedTenant = ObservedTenant()

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
    }
}

/// The tenant of the request, once known.
final class ObservedTenant: Sendable {
    private let value = Mutex<String?>(nil)
    var tenant: String? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

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
