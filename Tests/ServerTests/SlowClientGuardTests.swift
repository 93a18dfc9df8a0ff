import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

@testable import HabitSyncServer

/// `SlowClientGuard`'s phases, driven directly: every order in which pipelined requests can be
/// read and their responses written. A live server shows only the orders its scheduling happens
/// to produce (`SlowClientTests.pipelinedRequestsAreEachAnswered` hit a bad one about once in
/// fifteen loaded runs); here each one is run.
@Suite struct SlowClientGuardTests {
    enum Step: CustomStringConvertible {
        case readHead(Int), readEnd(Int), writeHead(Int), writeEnd(Int)

        var description: String {
            switch self {
            case .readHead(let k): "readHead\(k)"
            case .readEnd(let k): "readEnd\(k)"
            case .writeHead(let k): "writeHead\(k)"
            case .writeEnd(let k): "writeEnd\(k)"
            }
        }
    }

    /// Every merge of the reads (head, end of each request, in order) with the writes (head, end
    /// of each response, in order) in which a response starts only after its request's head.
    /// A response may start before its request's end is read (an early 413 or 503 does).
    static func orders(requests: Int) -> [[Step]] {
        let reads = (0..<requests).flatMap { [Step.readHead($0), .readEnd($0)] }
        let writes = (0..<requests).flatMap { [Step.writeHead($0), .writeEnd($0)] }
        var all: [[Step]] = []
        func extend(_ prefix: [Step], read: Int, written: Int) {
            if read == reads.count, written == writes.count { return all.append(prefix) }
            if read < reads.count { extend(prefix + [reads[read]], read: read + 1, written: written) }
            if written < writes.count {
                // writes[written] belongs to response written / 2; its request's head is reads[2k].
                let headsRead = (read + 1) / 2
                if written / 2 < headsRead { extend(prefix + [writes[written]], read: read, written: written + 1) }
            }
        }
        extend([], read: 0, written: 0)
        return all
    }

    static func limits() -> ConnectionLimits {
        var limits = ConnectionLimits()
        limits.headerTimeout = .seconds(600)
        limits.keepAliveTimeout = .seconds(2)
        limits.bodyTimeout = .seconds(600)
        limits.bodyGrace = .seconds(600)
        return limits
    }

    /// Runs `steps` on a fresh connection, then lets the keep-alive timeout pass; whether the
    /// guard closed the connection.
    static func closedAfterKeepAlive(_ steps: [Step]) throws -> Bool {
        let loop = EmbeddedEventLoop()
        let metrics = ServerMetrics()
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(
            SlowClientGuard(limits: limits(), registry: ConnectionRegistry(maximum: 10, metrics: metrics), metrics: metrics))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        for step in steps {
            switch step {
            case .readHead:
                try channel.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .get, scheme: nil, authority: "x", path: "/livez")))
            case .readEnd:
                try channel.writeInbound(HTTPRequestPart.end(nil))
            case .writeHead:
                try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
            case .writeEnd:
                try channel.writeOutbound(HTTPResponsePart.end(nil))
            }
        }
        // The guard's deadlines are real uptime instants; the embedded loop's clock starts at 0.
        loop.advanceTime(to: .now() + .seconds(30))
        let closed = !channel.isActive
        _ = try? channel.finish()
        return closed
    }

    @Test func theOrdersAreAllThere() {
        // One request: head, then (end, whead, wend) with whead/wend in order: 3 orders.
        #expect(Self.orders(requests: 1).count == 3)
        #expect(Self.orders(requests: 3).count > 100)
    }

    /// Once every request read has been answered, the connection is idle and its keep-alive
    /// clock runs, whatever the order.
    @Test(arguments: 1...3) func afterTheLastAnswerTheConnectionGoesIdle(requests: Int) throws {
        var failing: [String] = []
        for order in Self.orders(requests: requests) where try !Self.closedAfterKeepAlive(order) {
            failing.append(order.map(\.description).joined(separator: " "))
        }
        #expect(failing.isEmpty, "\(failing.count) orders stayed open, first: \(failing.first ?? "")")
    }

    /// While a response is still open, nothing is timed: not even a pipelined request's wait.
    @Test(arguments: 1...3) func anOpenResponseIsNeverCut(requests: Int) throws {
        var failing: [String] = []
        for order in Self.orders(requests: requests) {
            // Drop the last response's end: that response is still being written.
            guard let last = order.lastIndex(where: { if case .writeEnd = $0 { true } else { false } }) else { continue }
            var open = order
            open.remove(at: last)
            if try Self.closedAfterKeepAlive(open) { failing.append(open.map(\.description).joined(separator: " ")) }
        }
        #expect(failing.isEmpty, "\(failing.count) orders were cut mid-response, first: \(failing.first ?? "")")
    }
}
