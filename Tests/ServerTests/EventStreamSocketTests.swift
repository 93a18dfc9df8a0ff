import Foundation
import ServerHarness
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The harness's event-stream socket closes its descriptor once, also when it fails to open.
/// It used to close it in the initializer and again in `deinit` (which Swift runs when an
/// initializer throws after setting every property): the second `close` hit whatever another
/// thread had opened under that number meanwhile. The fault suite opens streams while the
/// database is down, beside the rest of the suite in one process; a test's socket closed
/// from under it is the likeliest cause of the pipelined test's rare ending (every answer
/// read, the connection never seen to close) that issue 44 asked about.
@Suite struct EventStreamSocketTests {
    /// What the test's threads share.
    final class Counters: Sendable {
        let stopped = Atomic<Bool>(false)
        let lost = Atomic<Int>(0)
    }

    /// A loopback listener that answers every connection with a 404 and closes it.
    final class RefusingListener: Sendable {
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.descriptor = descriptor
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && listen(descriptor, 128) == 0 && getsockname(descriptor, $0, &length) == 0 }
            }
            guard bound else { throw HarnessError("cannot listen: errno \(errno)") }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        /// Answers connections, on the calling thread, until `stop` is set.
        func answer(until stop: Counters) {
            let reply = Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            while !stop.stopped.load(ordering: .relaxed) {
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 100) == 1 else { continue }
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { continue }
                var timeout = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var request = [UInt8](repeating: 0, count: 4096)
                _ = recv(client, &request, request.count, 0)
                _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(client)
            }
        }
    }

    @Test func aStreamThatFailsToOpenClosesOnlyItsOwnDescriptor() async throws {
        let listener = try RefusingListener()
        defer { close(listener.descriptor) }
        let attempts = 1_500
        let shared = Counters()
        // Another thread keeps opening pipes and checks that each is still open before closing
        // it: a stray second close lands on one of them now and then.
        async let checked: Void = onOwnThread {
            while !shared.stopped.load(ordering: .relaxed) {
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { continue }
                for _ in 0..<50 { sched_yield() }
                for end in ends {
                    // A number closed from under us is not ours to close again.
                    if fcntl(end, F_GETFD) < 0 { shared.lost.add(1, ordering: .relaxed) } else { close(end) }
                }
            }
        }
        async let answered: Void = onOwnThread { listener.answer(until: shared) }
        // Stops at the first stray close: the next could land on this test's own sockets.
        let failures = try await onOwnThread { () -> Int in
            var failures = 0
            for _ in 0..<attempts where shared.lost.load(ordering: .relaxed) == 0 {
                do { _ = try EventStreamSocket(port: listener.port, token: "t", device: "d") } catch { failures += 1 }
            }
            return failures
        }
        shared.stopped.store(true, ordering: .relaxed)
        try await answered
        try await checked
        #expect(shared.lost.load(ordering: .relaxed) == 0, "descriptors of another thread were closed from under it")
        #expect(failures == attempts, "every open was refused")
    }
}
