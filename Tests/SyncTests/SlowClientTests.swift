import Foundation
import HabitSyncServer
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Issue 25, item 1: a stalled or trickling upload costs only its sender. Before, a push
/// reserved its decoding budget from the declared length before reading a byte and waited for
/// the body for ever: one stalled 8 MiB upload made every other push of the server 503.
@Suite struct SlowClientTests {
    static func slowConfiguration(headerTimeout: Duration = .seconds(60)) -> ServerConfiguration {
        var configuration = ServerConfiguration.forTests
        configuration.connections.headerTimeout = headerTimeout
        configuration.connections.bodyGrace = .seconds(2)
        configuration.connections.bodyTimeout = .seconds(8)
        configuration.connections.bodyMinimumBytesPerSecond = 8192
        return configuration
    }

    enum Shape: String, CaseIterable, Sendable {
        case declaredThenSilence, chunkedWithoutEnd, trickle
    }

    /// Opens a push of `shape` that never completes.
    static func openStalledUpload(_ shape: Shape, port: Int, token: String) throws -> RawHTTPConnection {
        let connection = try RawHTTPConnection(port: port)
        let head = "POST /v1/sync/push HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nX-Device-Id: stalled\r\nContent-Type: application/json\r\n"
        switch shape {
        case .declaredThenSilence:
            connection.send(head + "Content-Length: 8388608\r\n\r\n{\"batchId\":")
        case .chunkedWithoutEnd:
            connection.send(head + "Transfer-Encoding: chunked\r\n\r\nb\r\n{\"batchId\":\r\n")
        case .trickle:
            connection.send(head + "Content-Length: 5000\r\n\r\n{\"batchId\"")
        }
        return connection
    }

    @Test func stalledUploadsAreCutOffAndOtherUsersPushesAreAnswered() async throws {
        let world = try await SyncWorld.make()
        let (otherTenant, otherKey) = try await world.addTenant("globex")
        try await world.serve(Self.slowConfiguration()) { server in
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            // 50 of each shape, from five users in two tenants.
            var tokens: [String] = []
            for index in 0..<5 {
                tokens.append(index < 3 ? try await world.token(user: "stall-\(index)") : try await world.token(user: "stall-\(index)", tenant: otherTenant, key: otherKey))
            }
            var stalled: [(Shape, RawHTTPConnection)] = []
            for shape in Shape.allCases {
                for index in 0..<50 {
                    stalled.append((shape, try Self.openStalledUpload(shape, port: port, token: tokens[index % tokens.count])))
                }
            }
            // The tricklers send 10 bytes a second until the server closes them (bounded).
            let tricklers = stalled.filter { $0.0 == .trickle }.map(\.1)
            let trickling = Task.detached {
                try await onOwnThread {
                    var open = tricklers
                    for _ in 0..<600 where !open.isEmpty {
                        open = open.filter { !$0.isClosedByServer && $0.send("0123456789") }
                        Thread.sleep(forTimeInterval: 1)
                    }
                    return open.count
                }
            }
            // Meanwhile other users, in both tenants, push 1,000-change batches: all answered.
            let pushers = [
                try await world.client(server, user: "busy-1"), try await world.client(server, user: "busy-2"),
                SyncClient(baseURL: server.baseURL, token: try await world.token(user: "busy-3", tenant: otherTenant, key: otherKey), device: "phone"),
            ]
            try await withThrowingTaskGroup(of: Int.self) { group in
                for pusher in pushers {
                    for _ in 0..<2 {
                        group.addTask {
                            let changes = (0..<1000).map { _ in Wire.change("habits", UUID(), at: Wire.at(0), record: Wire.habit()) }
                            return try await pusher.push(changes, allowUnavailable: true).status
                        }
                    }
                }
                for try await status in group { #expect(status == 200, "a 1,000-change push beside the stalled uploads answered \(status)") }
            }
            // Every stalled upload is closed by its deadline: with a 408 where it could still be
            // read (a trickler's unread bytes may turn the close into a reset). A cut connection
            // whose handler could not answer within `SlowClientGuard.closeAfterCut` (a slow
            // machine, the pushes beside it holding every pooled connection) is closed without
            // one: cut off all the same. (How many were answered depends on the machine's speed;
            // the 408 itself is checked below, on a calm server.)
            let all = stalled
            let endings = try await onOwnThread { all.map { ($0.0, $0.1.readUntilClosed(waitSeconds: 120)) } }
            for (shape, ending) in endings {
                switch ending {
                case .closed(let response) where response.isEmpty:
                    continue
                case .closed(let response):
                    #expect(response.hasPrefix("HTTP/1.1 408"), "\(shape): \(response.prefix(200))")
                    #expect(response.contains("\"code\":\"upload_too_slow\""), "\(shape): \(response.prefix(300))")
                case .reset(let response):
                    #expect(shape == .trickle, "\(shape) was reset, not answered: \(response.prefix(200))")
                case .stillOpen:
                    Issue.record("\(shape): still open 120 s after its deadline")
                case .failed(let error, _):
                    Issue.record("\(shape): reading failed with errno \(error)")
                }
            }
            #expect(try await trickling.value == 0)
            stalled.forEach { $0.1.close() }
            // Alone on a now calm server, a stalled upload's handler has a connection to spare:
            // it reads the cut body and answers 408 well within `closeAfterCut`.
            let lone = try Self.openStalledUpload(.declaredThenSilence, port: port, token: tokens[0])
            switch try await onOwnThread({ lone.readUntilClosed(waitSeconds: 120) }) {
            case .closed(let response):
                #expect(response.hasPrefix("HTTP/1.1 408"), "a lone stalled upload: \(response.prefix(200))")
                #expect(response.contains("\"code\":\"upload_too_slow\""), "a lone stalled upload: \(response.prefix(300))")
            case let other:
                Issue.record("a lone stalled upload ended as \(other), not with its 408")
            }
            lone.close()
            // The budget is whole again: a push as large as the limit allows is decoded.
            let large = (0..<1000).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()) }
            #expect(try await pushers[0].push(large).status == 200)
            let metrics = try await server.get("/metrics").text
            #expect(metrics.contains("habitsync_http_connections_cut_total{reason=\"body_too_slow\"}"), "\(metrics.prefix(0))")
        }
    }

    @Test func connectionsThatNeverSendAWholeHeadOrStayIdleAreClosed() async throws {
        let world = try await SyncWorld.make()
        var configuration = Self.slowConfiguration(headerTimeout: .seconds(5))
        configuration.connections.keepAliveTimeout = .seconds(3)
        try await world.serve(configuration) { server in
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            let token = try await world.token(user: "alice")
            // A header sent a byte at a time, slower than the header timeout allows.
            let trickledHead = try RawHTTPConnection(port: port)
            let headClosed = Task.detached {
                try await onOwnThread {
                    for byte in "GET /v1/sync/pull HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n" {
                        guard trickledHead.send(String(byte)) else { return true }
                        Thread.sleep(forTimeInterval: 0.5)
                    }
                    return false
                }
            }
            if try await !headClosed.value {
                // Seen under load, twice: the server's counter said it cut the connection
                // (`header_timeout 1`) and the client saw no close. Likely cause, not yet fixed:
                // NIO accepts without SOCK_CLOEXEC, so a child process another test spawns at
                // that moment inherits the server's socket and keeps it open after the server
                // closes its descriptor (the pipelined test below failed the same way).
                let cuts = try await server.get("/metrics").text.split(separator: "\n").filter { $0.hasPrefix("habitsync_http_connections_cut") }
                Issue.record("a head trickled for longer than the header timeout was not cut off; \(cuts)")
            }
            // A connection that never sends anything, and one idle after a response.
            let silent = try RawHTTPConnection(port: port)
            let kept = try RawHTTPConnection(port: port)
            kept.send("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
            let endings = try await onOwnThread { [silent.readUntilClosed(waitSeconds: 120), kept.readUntilClosed(waitSeconds: 120)] }
            #expect(endings[0] == .closed(response: ""), "\(endings[0])")
            guard case .closed(let answer) = endings[1] else { Issue.record("kept-alive connection: \(endings[1])"); return }
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
            for connection in [trickledHead, silent, kept] { connection.close() }
            // The server serves on.
            #expect(try await world.client(server, user: "alice").pull().status == 200)
        }
    }

    /// Pipelined requests are each answered; the connection goes idle (and its keep-alive clock
    /// starts) only after the last answer.
    @Test func pipelinedRequestsAreEachAnswered() async throws {
        let world = try await SyncWorld.make()
        var configuration = Self.slowConfiguration()
        configuration.connections.keepAliveTimeout = .seconds(2)
        try await world.serve(configuration) { server in
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            let connection = try RawHTTPConnection(port: port)
            connection.send(String(repeating: "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n", count: 3))
            let ending = try await onOwnThread { connection.readUntilClosed(waitSeconds: 120) }
            // No known issue any more (issue 44): the guard goes idle after every order of
            // reads and writes (`SlowClientGuardTests`), 5,400 pipelined connections to six
            // servers beside two busy cores all closed, and the harness closed a descriptor
            // twice whenever the fault suite's event stream failed to open, in this process,
            // which can take a test's socket from under it (`EventStreamSocketTests`).
            guard case .closed(let text) = ending else {
                let cuts = try await server.get("/metrics").text.split(separator: "\n").filter { $0.hasPrefix("habitsync_http_connections_cut") }
                Issue.record("\(ending); \(cuts)")
                return
            }
            #expect(text.components(separatedBy: "HTTP/1.1 200").count - 1 == 3, "\(text)")
            connection.close()
        }
    }

    /// A stream lives past every slow-client timeout: once its request is whole, nothing is timed.
    @Test func aLongResponseIsNotCutByTheTimeouts() async throws {
        let world = try await SyncWorld.make()
        var configuration = Self.slowConfiguration()
        configuration.connections.keepAliveTimeout = .seconds(2)
        configuration.realtime.heartbeat = .seconds(1)
        try await world.serve(configuration) { server in
            let port = try #require(URLComponents(string: server.baseURL)?.port)
            let token = try await world.token(user: "alice")
            let stream = try RawHTTPConnection(port: port)
            stream.send("GET /v1/sync/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nAccept: text/event-stream\r\n\r\n")
            // Once the stream is open, read for longer than the keep-alive and body timeouts
            // together, and until a heartbeat came (bounded: a busy machine only delays them).
            let beats = try await onOwnThread { () -> Int in
                var timeout = timeval(tv_sec: 30, tv_usec: 0)
                setsockopt(stream.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var buffer = [UInt8](repeating: 0, count: 4096)
                var text = ""
                var opened: Date?
                let started = Date()
                func heartbeats() -> Int { text.components(separatedBy: ": heartbeat").count - 1 }
                while Date().timeIntervalSince(started) < 300 {
                    if let opened, Date().timeIntervalSince(opened) > 12, heartbeats() >= 1 { break }
                    let count = receiveRetryingInterrupts(stream.descriptor, into: &buffer)
                    // A receive timeout is a busy machine (the suite's tasks can hold the
                    // heartbeat back for a while): read on; only a close or an error ends it.
                    if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { continue }
                    guard count > 0 else { break }
                    text += String(decoding: buffer[..<count], as: UTF8.self)
                    if opened == nil, text.contains(": connected") { opened = Date() }
                }
                return heartbeats()
            }
            #expect(!stream.isClosedByServer, "the event stream was closed by a slow-client timeout")
            #expect(beats >= 1)
            stream.close()
        }
    }
}
