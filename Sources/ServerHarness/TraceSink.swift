import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An HTTP endpoint that takes every POST and keeps only its count and size, answering 200 at
/// once: where the benchmark's traced server sends its spans (OTLP/HTTP) and its webhooks are
/// delivered, so that what is measured is the server's cost of sending them, not a receiver's.
public final class TraceSink: Sendable {
    private let channel: any Channel
    private let counts: Counts
    public var port: Int { channel.localAddress?.port ?? 0 }
    /// What `OTEL_EXPORTER_OTLP_ENDPOINT` names.
    public var endpoint: String { "http://127.0.0.1:\(port)" }
    /// Exports received, and their bodies' bytes.
    public var received: (exports: Int, bytes: Int) { counts.state.withLock { ($0.exports, $0.bytes) } }

    final class Counts: Sendable {
        let state = Mutex((exports: 0, bytes: 0))
    }

    private init(channel: any Channel, counts: Counts) {
        self.channel = channel
        self.counts = counts
    }

    public static func start() async throws -> TraceSink {
        let counts = Counts()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(counts: counts))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TraceSink(channel: channel, counts: counts)
    }

    public func stop() async {
        try? await channel.close()
    }

    /// Answers each request 200 once its body has arrived, counting it.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let counts: Counts
        private var bytes = 0

        init(counts: Counts) { self.counts = counts }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: bytes = 0
            case .body(let buffer): bytes += buffer.readableBytes
            case .end:
                let received = bytes
                counts.state.withLock {
                    $0.exports += 1
                    $0.bytes += received
                }
                let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "0", "Content-Type": "application/x-protobuf"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
