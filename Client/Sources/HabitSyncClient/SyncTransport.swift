import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the engine's requests reach the server: URLSession by default; an app may wrap it
/// (logging, certificate pinning), and the convergence suite wraps it to inject faults.
public protocol SyncTransport: Sendable {
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

public struct URLSessionTransport: SyncTransport {
    public let session: URLSession

    public init(session: URLSession = .shared) { self.session = session }

    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw SyncProtocolError.malformedResponse }
        return (data, http)
    }
}
