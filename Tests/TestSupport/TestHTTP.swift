import Foundation
import ServerHarness

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A minimal HTTP client for tests, over URLSession (no extra dependency to build).
public enum TestHTTP {
    public typealias Reply = HTTPReply

    public static func request(_ method: String = "GET", _ url: String, headers: [String: String] = [:], body: Data? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body
        // Only against a hang: the suite runs hundreds of tests at once on two cores, and a
        // busy minute must not fail a request that would have been answered.
        request.timeoutInterval = 300
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await HTTPReply.fetch(request, on: .shared)
    }
}
