import Foundation
import ServerHarness
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A minimal HTTP client for tests, over URLSession (no extra dependency to build).
public enum TestHTTP {
    public typealias Reply = HTTPReply

    /// A session of its own with room for `connections` parallel requests (URLSession.shared
    /// queues requests beyond a few per host, which hides concurrency from the server).
    public static func session(connections: Int) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        return URLSession(configuration: configuration)
    }

    public static func request(_ method: String = "GET", _ url: String, headers: [String: String] = [:], body: Data? = nil, session: URLSession = .shared) async throws -> Reply {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = 30
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await HTTPReply.fetch(request, on: session)
    }
}
