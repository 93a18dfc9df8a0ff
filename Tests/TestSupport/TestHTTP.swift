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
        return try await HTTPReply.fetch(request, on: UncachedURLSession.shared)
    }

    /// Probes `baseURL/readyz` until it answers 200, at most `probes` times 0.1 s apart (a
    /// count, not a deadline: a busy machine only makes it take longer), or until `alive` says
    /// the server is gone. Returns the last status (0: no answer).
    public static func awaitReady(_ baseURL: String, probes: Int = 600, alive: () -> Bool = { true }) async throws -> Int {
        var status = 0
        for _ in 0..<probes where status != 200 && alive() {
            status = (try? await request("GET", "\(baseURL)/readyz").status) ?? 0
            if status != 200 { try await Task.sleep(for: .milliseconds(100)) }
        }
        return status
    }
}
