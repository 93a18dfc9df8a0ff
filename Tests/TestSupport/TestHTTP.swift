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
        request.timeoutInterval = 30
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await HTTPReply.fetch(request, on: .shared)
    }
}
