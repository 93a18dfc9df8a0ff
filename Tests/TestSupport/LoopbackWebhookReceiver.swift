import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// An app's backend on loopback, for the webhook tests: `POST /hook` keeps every delivery it
/// gets (headers and body, in arrival order) and answers as `behaviour` says for that arrival:
/// at once, slowly, too late for the server's timeout, or with a failure status.
public final class LoopbackWebhookReceiver: Sendable {
    public enum Answer: Sendable {
        case status(Int)
        /// `status` after `delay`.
        case slow(Int, delay: Duration)
    }

    public struct Arrival: Sendable {
        public let id: String
        public let timestamp: String
        public let signature: String
        public let contentType: String
        public let body: [UInt8]
        /// What the receiver answered (a failure, or too slow for the server: not delivered).
        public let answer: Answer
        /// The sender's port: arrivals over one connection share it.
        public let remotePort: Int

        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
        public var data: [String: Any] { json["data"] as? [String: Any] ?? [:] }
    }

    private let arrivals = Mutex<[Arrival]>([])
    private let behaviour: Mutex<@Sendable (Int) -> Answer>
    public let port: Int
    private let task: Task<Void, any Error>

    public var url: String { "http://127.0.0.1:\(port)/hook" }

    private init(port: Int, task: Task<Void, any Error>, behaviour: @escaping @Sendable (Int) -> Answer) {
        self.port = port
        self.task = task
        self.behaviour = Mutex(behaviour)
    }

    /// `behaviour` is given each arrival's number (0 for the first) and says how to answer it.
    public static func start(_ behaviour: @escaping @Sendable (Int) -> Answer = { _ in .status(200) }) async -> LoopbackWebhookReceiver {
        let box = Mutex<LoopbackWebhookReceiver?>(nil)
        let router = Router(context: Context.self)
        router.post("hook") { request, context -> Response in
            let body = try await request.body.collect(upTo: 16 << 20)
            guard let receiver = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            let answer = receiver.arrivals.withLock { arrivals in
                let answer = receiver.behaviour.withLock { $0 }(arrivals.count)
                arrivals.append(
                    Arrival(
                        id: request.headers[.init("webhook-id")!] ?? "", timestamp: request.headers[.init("webhook-timestamp")!] ?? "",
                        signature: request.headers[.init("webhook-signature")!] ?? "", contentType: request.headers[.contentType] ?? "",
                        body: Array(body.readableBytesView), answer: answer, remotePort: context.remotePort))
                return answer
            }
            switch answer {
            case .status(let status):
                return Response(status: .init(code: status))
            case .slow(let status, let delay):
                try? await Task.sleep(for: delay)
                return Response(status: .init(code: status))
            }
        }
        let (port, task) = await LoopbackApplication.start(router, label: "loopback-webhook-receiver")
        let receiver = LoopbackWebhookReceiver(port: port, task: task, behaviour: behaviour)
        box.withLock { $0 = receiver }
        return receiver
    }

    /// A request's context with the connection's remote port.
    struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        let remotePort: Int

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            remotePort = source.channel.remoteAddress?.port ?? 0
        }
    }

    public func answer(_ behaviour: @escaping @Sendable (Int) -> Answer) { self.behaviour.withLock { $0 = behaviour } }

    public var received: [Arrival] { arrivals.withLock { $0 } }

    /// Deliveries received, each once however often it came (`webhook-id`).
    public var deliveries: Int { Set(received.map(\.id)).count }

    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// Waits until `condition` holds of what arrived: checked every 50 ms, at most `checks`
    /// times (a count, not a deadline: a busy machine only takes longer). False if it never did.
    public func wait(checks: Int = 2400, until condition: ([Arrival]) -> Bool) async throws -> Bool {
        for _ in 0..<checks {
            if condition(received) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition(received)
    }
}
