import HabitSyncAuth
import Hummingbird
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
