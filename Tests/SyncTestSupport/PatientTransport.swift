import Foundation
import HabitSyncClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The SDK's own transport, with timeouts no loaded machine reaches. The suite runs dozens
    /// of in-process servers on two cores at once; under a CPU-heavy neighbour URLSession's
    /// default 60 s request timeout gave up on answers a starved server was still producing,
    /// and every SDK test of the run failed with -1001 at the same moment. What the tests
    /// assert never depends on how long an answer takes.
    public static func patient() -> URLSessionTransport {
        let configuration = URLSessionTransport.uncachedConfiguration()
        configuration.timeoutIntervalForRequest = 900
        configuration.timeoutIntervalForResource = 1800
        return URLSessionTransport(session: URLSession(configuration: configuration))
    }
}
