import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// URLSession for the harness's and the tests' HTTP, without a response cache. On Linux a
/// session with a cache (`URLSession.shared`'s, an ephemeral one's) looks each data task up on
/// another queue before the task has its protocol; a task cancelled in that window, as a
/// cancelled test's request is, traps the whole process in FoundationNetworking ("a task that
/// in not in the registry", swift-corelibs-foundation issue 3296). The SDK's
/// `URLSessionTransport.uncachedConfiguration` is the same for the device side.
public enum UncachedURLSession {
    public static func configuration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// In place of `URLSession.shared`.
    public static let shared = URLSession(configuration: configuration())
}
