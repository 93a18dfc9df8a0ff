import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// An OpenTelemetry collector's OTLP/HTTP traces endpoint on loopback, for the tests:
/// `POST /v1/traces` takes an `ExportTraceServiceRequest` in protobuf, decodes its spans
/// (`OTLPSpan`) and keeps them. What it cannot decode is answered 400 and counted, so a test
/// sees a malformed export rather than missing spans.
public final class LoopbackTraceReceiver: Sendable {
    private struct State {
        var spans: [OTLPSpan] = []
        var exports = 0
        var undecodable = 0
    }

    private let state = Mutex(State())
    public let port: Int
    private let task: Task<Void, any Error>

    /// What `OTEL_EXPORTER_OTLP_ENDPOINT` names (the exporter adds `/v1/traces`).
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    public static func start() async throws -> LoopbackTraceReceiver {
        let box = Mutex<LoopbackTraceReceiver?>(nil)
        let router = Router()
        router.post("v1/traces") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 64 << 20)
            guard let receiver = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            do {
                let spans = try OTLPSpan.decode(exportRequest: Array(body.readableBytesView))
                receiver.state.withLock {
                    $0.spans += spans
                    $0.exports += 1
                }
            } catch {
                receiver.state.withLock { $0.undecodable += 1 }
                return Response(status: .badRequest)
            }
            // An empty ExportTraceServiceResponse: everything accepted.
            return Response(status: .ok, headers: [.contentType: "application/x-protobuf"], body: .init(byteBuffer: ByteBuffer()))
        }
        let (port, task) = await LoopbackApplication.start(router, label: "loopback-trace-receiver")
        let receiver = LoopbackTraceReceiver(port: port, task: task)
        box.withLock { $0 = receiver }
        return receiver
    }

    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// Every span received so far, in the order they arrived.
    public var spans: [OTLPSpan] { state.withLock { $0.spans } }
    /// Exports received and decoded.
    public var exports: Int { state.withLock { $0.exports } }
    /// Exports that were not a decodable `ExportTraceServiceRequest`.
    public var undecodable: Int { state.withLock { $0.undecodable } }
}
