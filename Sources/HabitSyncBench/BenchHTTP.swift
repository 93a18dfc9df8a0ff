import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One device's HTTP connection to the server (its own URLSession, one connection).
final class BenchHTTP: Sendable {
    let session: URLSession
    let baseURL: String
    let token: String
    let device: String

    init(baseURL: String, token: String, device: String) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 1
        configuration.timeoutIntervalForRequest = 120
        session = URLSession(configuration: configuration)
        self.baseURL = baseURL
        self.token = token
        self.device = device
    }

    func push(_ body: Data) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: baseURL + "/v1/sync/push")!)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue(device, forHTTPHeaderField: "X-Device-Id")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, response) = try await session.data(for: request)
        return ((response as! HTTPURLResponse).statusCode, data)
    }

    func pull(cursor: String?, limit: Int) async throws -> (changes: Int, cursor: String?, hasMore: Bool) {
        var url = baseURL + "/v1/sync/pull?limit=\(limit)"
        if let cursor { url += "&cursor=\(cursor)" }
        var request = URLRequest(url: URL(string: url)!)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await session.data(for: request)
        guard (response as! HTTPURLResponse).statusCode == 200 else { throw BenchError("pull answered \((response as! HTTPURLResponse).statusCode)") }
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return ((object["changes"] as? [Any])?.count ?? 0, object["cursor"] as? String, object["hasMore"] as? Bool ?? false)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
