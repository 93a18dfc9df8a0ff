import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One `GET /v1/sync/events` stream over a plain socket, for the realtime benchmark and the
/// fault suite: a thousand of these cost a file descriptor each, not a URLSession task.
// @unchecked Sendable: one thread uses a socket at a time — the benchmark opens them on one
// thread and hands them, through that thread's completion (which orders the accesses), to
// the thread that reads them; nothing touches one concurrently.
public final class EventStreamSocket: @unchecked Sendable {
    public let descriptor: Int32
    private var buffer: [UInt8] = []

    /// Connects, asks for the stream, and reads until the server's `: connected` (the stream
    /// is registered from then on). A failure closes the socket once, in `deinit`: Swift runs
    /// the deinitializer of an object whose initializer throws after setting every property,
    /// so a `close` here too closed the descriptor twice, and the second closed whatever the
    /// process had opened under that number meanwhile (another test's socket or pipe).
    public init(port: Int, token: String, device: String) throws {
        descriptor = try connectLoopbackSocket(port: port)
        let request = "GET /v1/sync/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nX-Device-Id: \(device)\r\nAccept: text/event-stream\r\n\r\n"
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw HarnessError("send() failed: errno \(errno)") }
            sent += n
        }
        guard try waitFor("\r\n\r\n", milliseconds: 30_000, consuming: false),
            String(decoding: buffer.prefix(12), as: UTF8.self).hasPrefix("HTTP/1.1 200"),
            try waitFor(": connected", milliseconds: 30_000)
        else {
            throw HarnessError("the stream did not open: \(String(decoding: buffer.prefix(200), as: UTF8.self))")
        }
    }

    deinit { close(descriptor) }

    /// Reads until `text` has arrived (then forgets what was read, up to it, if `consuming`),
    /// or `milliseconds` passed.
    public func waitFor(_ text: String, milliseconds: Int32, consuming: Bool = true) throws -> Bool {
        let needle = Array(text.utf8)
        let deadline = ContinuousClock.now + .milliseconds(Int(milliseconds))
        while true {
            if let range = buffer.firstRange(of: needle) {
                if consuming { buffer.removeSubrange(..<range.upperBound) }
                return true
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var descriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(left / .milliseconds(1)) + 1)
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let n = receiveRetryingInterrupts(self.descriptor, into: &chunk)
            guard n > 0 else { throw HarnessError("the stream closed (recv: \(n), errno \(errno))") }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// Reads whatever has arrived without waiting, and forgets it.
    public func drain() {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while chunk.withUnsafeMutableBytes({ recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        buffer.removeAll()
    }
}
