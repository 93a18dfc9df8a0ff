import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP answer, whatever its status: what the harness's devices and the tests' requests
/// read. Transport failures (refused, reset, timed out) are thrown by `fetch`, never a reply.
public struct HTTPReply: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let body: Data

    public var text: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    /// The body as a JSON object (an empty one when it is JSON of another kind).
    public func json() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
    }

    /// Sends `request` on `session` and collects the answer.
    public static func fetch(_ request: URLRequest, on session: URLSession) async throws -> HTTPReply {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw HarnessError("not an HTTP response") }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)"] = "\(value)" }
        return HTTPReply(status: http.statusCode, headers: headers, body: data)
    }
}
