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

    /// Nil when no route has this path.
    func methods(for path: String) -> [String]? {
        let normalised = "/" + path.split(separator: "/").joined(separator: "/")
        return table.withLock { $0[normalised] }
    }
}
