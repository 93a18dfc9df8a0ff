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

    /// - Parameter connections: parallel requests this device may have open (1, as a phone).
    public init(baseURL: String, token: String, device: String, timeout: TimeInterval = 120, connections: Int = 1) {
        let configuration = UncachedURLSession.configuration()
        configuration.httpMaximumConnectionsPerHost = connections
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
        self.baseURL = baseURL
        self.token = token
        self.device = device
    }

    /// The same user and session under another device id.
    public func withDevice(_ device: String) -> DeviceClient {
        DeviceClient(baseURL: baseURL, token: token, device: device, session: session)
    }

    private init(baseURL: String, token: String, device: String, session: URLSession) {
        self.baseURL = baseURL
        self.token = token
        self.device = device
        self.session = session
    }

    /// `POST /v1/sync/push`. `headers` are added or replace the defaults (Content-Type,
    /// X-Device-Id, Authorization); an empty value leaves that header out.
    public func push(_ body: Data, headers: [String: String] = [:]) async throws -> HTTPReply {
        try await send("POST", "/v1/sync/push", body: body, headers: ["Content-Type": "application/json", "X-Device-Id": device].merging(headers) { $1 })
    }

    /// `GET /v1/sync/pull` with the given query parameters (nil ones left out).
    public func pull(cursor: String?, limit: Int?, collections: String? = nil, extra: String = "") async throws -> HTTPReply {
        var items: [String] = []
        if let cursor { items.append("cursor=\(cursor)") }
        if let limit { items.append("limit=\(limit)") }
        if let collections { items.append("collections=\(collections)") }
        if !extra.isEmpty { items.append(extra) }
        return try await get("/v1/sync/pull" + (items.isEmpty ? "" : "?" + items.joined(separator: "&")))
    }

    public func get(_ path: String) async throws -> HTTPReply {
        try await send("GET", path)
    }

    /// Any request with this device's token; throws when `path` makes no URL.
    public func send(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> HTTPReply {
        guard let url = URL(string: baseURL + path) else { throw HarnessError("not a URL path: \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in ["Authorization": "Bearer \(token)"].merging(headers, uniquingKeysWith: { $1 }) where !value.isEmpty {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return try await HTTPReply.fetch(request, on: session)
    }
}
