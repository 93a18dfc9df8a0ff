import Hummingbird
import Synchronization

/// The methods each route path supports, read from the router once its routes are added, so
/// that a known path asked with another method is answered 405 with `Allow` instead of 404.
final class RouteMethods: Sendable {
    private let table = Mutex<[String: [String]]>([:])

    func record(_ routes: [(path: String, method: String)]) {
        var methods: [String: [String]] = [:]
        for route in routes {
            let path = "/" + route.path.split(separator: "/").joined(separator: "/")
            methods[path, default: []].append(route.method)
        }
        table.withLock { $0 = methods.mapValues { Array(Set($0)).sorted() } }
    }

    /// The API error `error` is for `request`: a `not_found` on a path that exists with other
    /// methods is a 405 naming them. The one mapping the response and the request's trace use.
    func apiError(for error: any Error, of request: Request) -> APIError {
        var apiError = APIError.from(error)
        if apiError.kind == .notFound, let allowed = methods(for: request.uri.path) {
            // The path exists, the method does not: 405 with the methods it has.
            apiError = APIError(.methodNotAllowed, "\(request.method.rawValue) is not supported on this path; use \(allowed.joined(separator: " or "))")
            apiError.allowedMethods = allowed
        }
        return apiError
    }

    /// Nil when no route has this path.
    func methods(for path: String) -> [String]? {
        let normalised = "/" + path.split(separator: "/").joined(separator: "/")
        return table.withLock { $0[normalised] }
    }
}
