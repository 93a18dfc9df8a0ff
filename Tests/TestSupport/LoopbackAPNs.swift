import Foundation
import Hummingbird
import HummingbirdHTTP2
import NIOCore
import NIOSSL
import Synchronization

/// Apple's push service on loopback, for the wake tests: HTTP/2 over TLS with a certificate
/// made for the run (`trustRoot` is what the server under test must trust). Keeps every
/// notification it gets (path, headers, body, whether it came over HTTP/2) and answers as APNs
/// does: 200, or for a token `answers` names, that status and `{"reason": …}`.
public final class LoopbackAPNs: Sendable {
    public struct Notification: Sendable {
        public let token: String
        public let headers: [String: String]
        public let body: [UInt8]
        public let overHTTP2: Bool
    }

    private let received = Mutex<[Notification]>([])
    private let answers: Mutex<[String: (status: Int, reason: String)]>
    public let port: Int
    public let trustRoot: NIOSSLCertificate
    private let task: Task<Void, any Error>

    public var endpoint: String { "https://127.0.0.1:\(port)" }
    public var notifications: [Notification] { received.withLock { $0 } }

    private init(port: Int, trustRoot: NIOSSLCertificate, answers: [String: (Int, String)], task: Task<Void, any Error>) {
        self.port = port
        self.trustRoot = trustRoot
        self.answers = Mutex(answers)
        self.task = task
    }

    /// A request context that keeps the channel: an HTTP/2 stream's is a stream channel.
    struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        let overHTTP2: Bool
        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            overHTTP2 = String(describing: type(of: source.channel)).contains("HTTP2")
        }
    }

    /// `answers`: token → (status, reason) for the tokens APNs refuses.
    public static func start(answers: [String: (Int, String)] = [:]) async throws -> LoopbackAPNs {
        let (certificate, key) = try makeCertificate()
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        let box = Mutex<LoopbackAPNs?>(nil)
        let router = Router(context: Context.self)
        router.post("3/device/:token") { request, context -> Response in
            let body = try await request.body.collect(upTo: 64 * 1024)
            guard let server = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            let token = context.parameters.get("token") ?? ""
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            server.received.withLock {
                $0.append(Notification(token: token, headers: headers, body: Array(body.readableBytesView), overHTTP2: context.overHTTP2))
            }
            guard let refusal = server.answers.withLock({ $0[token] }) else { return Response(status: .ok) }
            return Response(
                status: .init(code: refusal.status), headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"reason":"\#(refusal.reason)"}"#)))
        }
        let (port, task) = await LoopbackApplication.start(router, server: try .http2Upgrade(tlsConfiguration: tls), label: "loopback-apns")
        let server = LoopbackAPNs(port: port, trustRoot: certificate, answers: answers, task: task)
        box.withLock { $0 = server }
        return server
    }

    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// A P-256 certificate for 127.0.0.1, made by openssl for this run.
    static func makeCertificate() throws -> (NIOSSLCertificate, NIOSSLPrivateKey) {
        let directory = try makeTemporaryDirectory("loopback-apns")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path, certificate = directory.appendingPathComponent("cert.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        return (try NIOSSLCertificate(file: certificate, format: .pem), try NIOSSLPrivateKey(file: key, format: .pem))
    }
}
