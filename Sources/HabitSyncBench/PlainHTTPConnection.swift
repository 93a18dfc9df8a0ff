import Foundation
import ServerHarness

#if canImport(Glibc)
    import Glibc
#endif

/// One keep-alive HTTP/1.1 connection over a blocking socket, for the push and pull
/// measurements: what curl or wrk would do. URLSession on Linux spent longer receiving a 1.5 MB
/// page than the server spent producing it, and as much CPU per push as the server, and the
/// benchmark measures the server. Responses carry a Content-Length, except the streamed ones
/// `streamed` reads (chunked).
final class PlainHTTPConnection {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        descriptor = try connectLoopbackSocket(port: port)
    }

    deinit { close(descriptor) }

    /// Sends a GET and reads the whole response. Blocks the calling thread.
    func get(_ path: String, headers: [String: String]) throws -> (status: Int, body: Data) {
        try request("GET", path, headers: headers, body: nil)
    }

    /// Sends a request and reads a chunked (streamed) response through, keeping none of it:
    /// the status and how many body bytes came. Blocks the calling thread.
    func streamed(_ method: String, _ path: String, headers: [String: String]) throws -> (status: Int, bytes: Int) {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try sendAll(Array((request + "\r\n").utf8))
        let headerEnd = try readUntilHeaderEnd()
        let head = String(decoding: buffer[..<headerEnd], as: UTF8.self)
        guard let status = Int(head.split(separator: " ").dropFirst().first ?? "") else { throw BenchError("not an HTTP response: \(head.prefix(80))") }
        guard head.lowercased().contains("transfer-encoding: chunked") else { throw BenchError("the response is not chunked") }
        buffer.removeFirst(headerEnd + 4)
        var bytes = 0
        while true {
            let lineEnd = try readUntil([13, 10])
            guard let size = Int(String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16) else { throw BenchError("bad chunk size") }
            buffer.removeFirst(lineEnd + 2)
            while buffer.count < size + 2 { try receive() }
            buffer.removeFirst(size + 2)
            bytes += size
            if size == 0 { return (status, bytes) }
        }
    }

    private func sendAll(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw BenchError("send() failed: errno \(errno)") }
            sent += n
        }
    }

    private func readUntil(_ separator: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= separator.count {
                for index in searchFrom...(buffer.count - separator.count) where buffer[index] == separator[0] && Array(buffer[index..<(index + separator.count)]) == separator {
                    return index
                }
                searchFrom = buffer.count - separator.count + 1
            }
            try receive()
        }
    }

    /// Sends a DELETE and reads the whole response. Blocks the calling thread.
    func delete(_ path: String, headers: [String: String]) throws -> (status: Int, body: Data) {
        try request("DELETE", path, headers: headers, body: nil)
    }

    /// Sends a POST with `body` and reads the whole response. Blocks the calling thread.
    func post(_ path: String, headers: [String: String], body: Data) throws -> (status: Int, body: Data) {
        try request("POST", path, headers: headers, body: body)
    }

    /// Pushes `body` until it is stored; how many `503`s it met. A 503 (the pool or the
    /// statement timeout of a loaded machine) is the protocol's "try again", and a bench body
    /// carries its own batch id, so the retry stores it once, as a phone's would.
    func pushUntilStored(headers: [String: String], body: Data, what: String) throws -> Int {
        for retries in 0..<100 {
            let status = try post("/v1/sync/push", headers: headers, body: body).status
            if status == 200 { return retries }
            guard status == 503 else { throw BenchError("\(what) answered \(status)") }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw BenchError("\(what) answered 503 a hundred times")
    }

    private func request(_ method: String, _ path: String, headers: [String: String], body: Data?) throws -> (status: Int, body: Data) {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let body { request += "Content-Length: \(body.count)\r\n" }
        request += "\r\n"
        var bytes = Array(request.utf8)
        if let body { bytes.append(contentsOf: body) }
        try sendAll(bytes)
        let headerEnd = try readUntilHeaderEnd()
        let head = String(decoding: buffer[..<headerEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
            throw BenchError("not an HTTP response: \(head.prefix(80))")
        }
        guard let lengthLine = lines.first(where: { $0.lowercased().hasPrefix("content-length:") }),
            let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
        else { throw BenchError("the response has no Content-Length") }
        buffer.removeFirst(headerEnd + 4)
        while buffer.count < length { try receive() }
        let body = Data(buffer[..<length])
        buffer.removeFirst(length)
        return (status, body)
    }

    private func readUntilHeaderEnd() throws -> Int { try readUntil([13, 10, 13, 10]) }

    private func receive() throws {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let n = receiveRetryingInterrupts(descriptor, into: &chunk)
        guard n > 0 else { throw BenchError("the server closed the connection (recv: \(n), errno \(errno))") }
        buffer.append(contentsOf: chunk[..<n])
    }
}
