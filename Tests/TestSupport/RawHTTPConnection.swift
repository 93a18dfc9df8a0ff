import Foundation
import ServerHarness

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection to the server for tests that misbehave on purpose: send part of a
/// request, stall, trickle, or just hold the connection. Blocking calls; run them on a thread
/// of their own (`onOwnThread`).
public final class RawHTTPConnection: Sendable {
    public let descriptor: Int32

    public init(port: Int) throws {
        descriptor = try connectLoopbackSocket(port: port)
    }

    /// Sends all of `text`; false once the server has closed the connection.
    @discardableResult
    public func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if result < 0, errno == EINTR { continue }
            if result <= 0 { return false }
            sent += result
        }
        return true
    }

    /// How a connection ended, as its reader saw it.
    public enum Ending: Sendable, Equatable {
        /// The server wrote this and closed.
        case closed(response: String)
        /// The server reset the connection (it closed with unread bytes of ours).
        case reset(response: String)
        /// Still open after `waitSeconds` of silence, having written this.
        case stillOpen(response: String)
        /// Reading failed otherwise (`errno`), after this was read.
        case failed(errno: Int32, response: String)
    }

    /// Reads until the server closes, at most `waitSeconds` of silence per read.
    public func readUntilClosed(waitSeconds: Int = 120) -> Ending {
        var timeout = timeval(tv_sec: waitSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = receiveRetryingInterrupts(descriptor, into: &buffer)
            // Read before anything else can overwrite it (decoding the text allocates).
            let error = errno
            if count > 0 {
                received += buffer[..<count]
                continue
            }
            let text = String(decoding: received, as: UTF8.self)
            if count == 0 { return .closed(response: text) }
            switch error {
            case ECONNRESET: return .reset(response: text)
            case EAGAIN, EWOULDBLOCK: return .stillOpen(response: text)
            default: return .failed(errno: error, response: text)
            }
        }
    }

    /// Reads until `marker` has arrived, the server closes, or `waitSeconds` of silence; returns
    /// what was read.
    public func read(until marker: String, waitSeconds: Int = 60) -> String {
        var timeout = timeval(tv_sec: waitSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let count = receiveRetryingInterrupts(descriptor, into: &buffer)
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether the server has closed the connection, without waiting.
    public var isClosedByServer: Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    public func close() { Glibc.close(descriptor) }
}
