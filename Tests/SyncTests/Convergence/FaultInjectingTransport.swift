import Foundation
import HabitSyncClient
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The network between the convergence suite's devices and the server, at the HTTP level:
/// it drops requests before they reach the server, drops answers after the server committed,
/// sends requests twice, and delays them. It also sends each request to wherever the server
/// runs now (a restarted server listens on another port).
final class FaultInjectingTransport: SyncTransport {
    struct Counts: Sendable {
        var requests = 0
        var droppedRequests = 0
        var droppedResponses = 0
        var duplicated = 0
        var delayed = 0
    }

    /// A push the server answered 200: what was sent and what the server said (the device may
    /// never have seen the answer).
    struct AnsweredPush: Sendable {
        let device: String
        let body: Data
        let response: Data
    }

    struct State: Sendable {
        var server: URL?
        var faultsOn = true
        var counts = Counts()
        var answeredPushes: [AnsweredPush] = []
    }

    private let state = Mutex(State())
    private let inner = URLSessionTransport(session: URLSession(configuration: URLSessionTransport.uncachedConfiguration()))
    /// Each fault's probability per request.
    let dropRequest = 0.05, dropResponse = 0.05, duplicate = 0.05, delay = 0.10

    var counts: Counts { state.withLock { $0.counts } }
    var answeredPushes: [AnsweredPush] { state.withLock { $0.answeredPushes } }

    func route(to server: URL) { state.withLock { $0.server = server } }

    func setFaults(_ on: Bool) { state.withLock { $0.faultsOn = on } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        enum Fault { case none, dropRequest, dropResponse, duplicate }
        let (server, faultsOn) = state.withLock { ($0.server, $0.faultsOn) }
        guard let server, let original = request.url, var parts = URLComponents(url: original, resolvingAgainstBaseURL: true) else {
            throw URLError(.cannotConnectToHost)
        }
        parts.port = server.port
        parts.host = server.host
        var routed = request
        routed.url = parts.url
        routed.timeoutInterval = 120

        let roll = Double.random(in: 0..<1)
        var fault = Fault.none
        if faultsOn {
            if roll < dropRequest {
                fault = .dropRequest
            } else if roll < dropRequest + dropResponse {
                fault = .dropResponse
            } else if roll < dropRequest + dropResponse + duplicate {
                fault = .duplicate
            }
        }
        let delayed = faultsOn && Double.random(in: 0..<1) < delay
        state.withLock { state in
            state.counts.requests += 1
            if delayed { state.counts.delayed += 1 }
            switch fault {
            case .none: break
            case .dropRequest: state.counts.droppedRequests += 1
            case .dropResponse: state.counts.droppedResponses += 1
            case .duplicate: state.counts.duplicated += 1
            }
        }
        if delayed { try await Task.sleep(for: .milliseconds(Int.random(in: 1...40))) }
        switch fault {
        case .none:
            return try await recorded(routed)
        case .dropRequest:
            throw URLError(.networkConnectionLost)
        case .dropResponse:
            _ = try await recorded(routed)
            throw URLError(.networkConnectionLost)
        case .duplicate:
            // Both copies reach the server; the device sees one answer.
            async let first = recorded(routed)
            async let second = recorded(routed)
            let answers = try await [first, second]
            return answers[Int.random(in: 0...1)]
        }
    }

    /// Sends, and keeps every push the server answered 200 (for the counting check).
    private func recorded(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await inner.send(request)
        if response.statusCode == 200, request.url?.path.hasSuffix("sync/push") == true, let body = request.httpBody,
            let device = request.value(forHTTPHeaderField: "X-Device-Id")
        {
            state.withLock { $0.answeredPushes.append(AnsweredPush(device: device, body: body, response: data)) }
        }
        return (data, response)
    }
}
