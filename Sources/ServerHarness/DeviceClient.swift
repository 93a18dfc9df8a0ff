import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One device talking to the server over HTTP: its own session and connection, its token and
/// device id. Transport failures (refused, reset, timed out) are thrown; every HTTP answer,
/// whatever its status, is returned.
public final class DeviceClient: Sendable {
    public let baseURL: String
    public let token: String
    public let device: String
    private let session: URLSession

    public init(baseURL: String, token: String, device: String, timeout: TimeInterval = 120) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 1
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
        self.baseURL = baseURL
        self.token = token
        self.device = device
    }

    public func push(_ body: Data) async throws -> HTTPReply {
        var request = URLRequest(url: URL(string: baseURL + "/v1/sync/push")!)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(device, forHTTPHeaderField: "X-Device-Id")
        return try await send(request)
    }

    public func pull(cursor: String?, limit: Int) async throws -> HTTPReply {
        var url = baseURL + "/v1/sync/pull?limit=\(limit)"
        if let cursor { url += "&cursor=\(cursor)" }
        return try await send(URLRequest(url: URL(string: url)!))
    }

    public func get(_ path: String) async throws -> HTTPReply {
        try await send(URLRequest(url: URL(string: baseURL + path)!))
    }

    private func send(_ request: URLRequest) async throws -> HTTPReply {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return try await HTTPReply.fetch(request, on: session)
    }
}
