import Foundation
import ServerHarness

#if canImport(Glibc)
import Glibc
#endif

/// One keep-alive HTTP/1.1 connection over a blocking socket, for the push and pull
/// measurements: what curl or wrk would do. URLSession on Linux spent longer receiving a 1.5 MB
/// page than the server spent producing it, and as much CPU per push as the server, and the
/// benchmark measures the server. Responses must carry a Content-Length (the server's always do).
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

    /// Sends a POST with `body` and reads the whole response. Blocks the calling thread.
    func post(_ path: String, headers: [String: String], body: Data) throws -> (status: Int, body: Data) {
        try request("POST", path, headers: headers, body: body)
    }

    private func request(_ method: String, _ path: String, headers: [String: String], body: Data?) throws -> (status: Int, body: Data) {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let body { request += "Content-Length: \(body.count)\r\n" }
        request += "\r\n"
        var bytes = Array(request.utf8)
        if let body { bytes.append(contentsOf: body) }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw BenchError("send() failed: errno \(errno)") }
            sent += n
        }
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

    private func readUntilHeaderEnd() throws -> Int {
        let separator: [UInt8] = [13, 10, 13, 10]
        var searchFrom = 0
        while true {
            if buffer.count >= 4 {
                for index in searchFrom...(buffer.count - 4) where buffer[index] == 13 && Array(buffer[index..<(index + 4)]) == separator {
                    return index
                }
                searchFrom = buffer.count - 3
            }
            try receive()
        }
    }

    private func receive() throws {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let n = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw BenchError("the server closed the connection (recv: \(n), errno \(errno))") }
        buffer.append(contentsOf: chunk[..<n])
    }
}
