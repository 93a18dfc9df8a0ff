import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// An identity provider's key endpoints on loopback, for the tests: `GET /jwks.json` serves
/// whatever key set the test sets, `GET /.well-known/openid-configuration` a discovery
/// document naming `issuer` and the JWKS URL. It counts the requests of each path, and can
/// go down (503) and come back, as a provider does.
public final class LoopbackKeyServer: Sendable {
    private struct State {
        var jwks: [UInt8] = Array(#"{"keys":[]}"#.utf8)
        var down = false
        var stalled = false
        var requests: [String: Int] = [:]
        var discoveryIssuer: String?
    }

    private let state = Mutex(State())
    public let port: Int
    private let task: Task<Void, any Error>

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var jwksURL: String { "\(baseURL)/jwks.json" }

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    /// Starts one; stop it with `stop()`.
    public static func start() async throws -> LoopbackKeyServer {
        let box = Box()
        let router = Router()
        router.get("jwks.json") { _, _ in
            let server = try box.server()
            // A provider that accepts the connection and never answers.
            while server.state.withLock({ $0.stalled }) { try await Task.sleep(for: .milliseconds(50)) }
            return try server.answer(path: "/jwks.json") { $0.jwks }
        }
        router.get(".well-known/openid-configuration") { _, _ in
            try box.server().answer(path: "/.well-known/openid-configuration") { state in
                let issuer = state.discoveryIssuer ?? ""
                let document: [String: Any] = ["issuer": issuer, "jwks_uri": "\(try box.server().jwksURL)", "id_token_signing_alg_values_supported": ["RS256"]]
                return Array((try? JSONSerialization.data(withJSONObject: document)) ?? Data())
            }
        }
        let (port, task) = await LoopbackApplication.start(router, label: "loopback-key-server")
        let server = LoopbackKeyServer(port: port, task: task)
        box.set(server)
        return server
    }

    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// The key set `/jwks.json` serves from now on.
    public func serve(jwks: String) { state.withLock { $0.jwks = Array(jwks.utf8) } }
    /// The issuer the discovery document names.
    public func serveDiscovery(issuer: String) { state.withLock { $0.discoveryIssuer = issuer } }
    /// While stalled, `/jwks.json` answers nothing (until it is no longer stalled).
    public func setStalled(_ stalled: Bool) { state.withLock { $0.stalled = stalled } }
    /// While down, every path answers 503.
    public func setDown(_ down: Bool) { state.withLock { $0.down = down } }
    /// Requests of `path` so far (answered or not).
    public func requests(_ path: String) -> Int { state.withLock { $0.requests[path] ?? 0 } }

    private func answer(path: String, _ body: (State) throws -> [UInt8]) throws -> Response {
        let (down, bytes) = try state.withLock { state -> (Bool, [UInt8]) in
            state.requests[path, default: 0] += 1
            return (state.down, state.down ? [] : try body(state))
        }
        if down { return Response(status: .serviceUnavailable) }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The server, for routes made before it exists.
    private final class Box: Sendable {
        private let value = Mutex<LoopbackKeyServer?>(nil)
        func set(_ server: LoopbackKeyServer) { value.withLock { $0 = server } }
        func server() throws -> LoopbackKeyServer {
            guard let server = value.withLock({ $0 }) else { throw HTTPError(.serviceUnavailable) }
            return server
        }
    }
}
