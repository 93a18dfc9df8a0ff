import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One message of a Server-Sent Events stream.
public enum ServerSentEvent: Sendable, Equatable {
    /// An event: its `event:` name (`message` when absent), its `id:`, its `data:` lines.
    case event(name: String, id: String?, data: String)
    /// A comment line (`: heartbeat`): the server keeps the connection open.
    case comment(String)
}

/// Reads a `text/event-stream` response as it arrives (URLSession on Linux has no async
/// bytes): a data delegate cuts the bytes into lines and the lines into messages.
final class ServerSentEventReader: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var pending: [UInt8] = []
        var name: String?
        var id: String?
        var data: [String] = []
    }

    private let state = Locked(State())
    private let output: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation
    /// Largest line kept while waiting for its end: a server that never sends a newline
    /// cannot grow the device's memory.
    static let maximumLineBytes = 1 << 20

    init(_ output: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation) { self.output = output }

    /// Opens `request` and returns its messages; cancelling the consumer closes the connection.
    static func messages(_ request: URLRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let (messages, output) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        let reader = ServerSentEventReader(output)
        let configuration = URLSessionTransport.uncachedConfiguration()
        configuration.timeoutIntervalForRequest = 24 * 3600
        let session = URLSession(configuration: configuration, delegate: reader, delegateQueue: nil)
        let task = session.dataTask(with: request)
        // Called when the consumer is cancelled, under its status lock: cancel later.
        output.onTermination = { _ in
            task.cancelLater()
            DispatchQueue.global().async { session.invalidateAndCancel() }
        }
        task.resume()
        return messages
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else {
            output.finish(throwing: SyncProtocolError.malformedResponse)
            return completionHandler(.cancel)
        }
        guard http.statusCode == 200 else {
            output.finish(throwing: SyncEngine.error(http, body: Data()))
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let messages = state.withLock { state -> [ServerSentEvent]? in
            state.pending.append(contentsOf: data)
            var messages: [ServerSentEvent] = []
            while let newline = state.pending.firstIndex(of: 10) {
                var line = Array(state.pending[..<newline])
                state.pending.removeSubrange(...newline)
                if line.last == 13 { line.removeLast() }
                if let message = Self.read(String(decoding: line, as: UTF8.self), into: &state) { messages.append(message) }
            }
            return state.pending.count > Self.maximumLineBytes ? nil : messages
        }
        guard let messages else {
            output.finish(throwing: SyncProtocolError.malformedResponse)
            dataTask.cancel()
            return
        }
        for message in messages { output.yield(message) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { output.finish(throwing: error) } else { output.finish() }
        session.finishTasksAndInvalidate()
    }

    /// One line of the stream (the SSE rules: `field: value`, a blank line ends an event).
    private static func read(_ line: String, into state: inout State) -> ServerSentEvent? {
        if line.isEmpty {
            defer { state.name = nil; state.data = [] }
            guard !state.data.isEmpty || state.name != nil else { return nil }
            return .event(name: state.name ?? "message", id: state.id, data: state.data.joined(separator: "\n"))
        }
        if line.hasPrefix(":") { return .comment(String(line.dropFirst()).trimmingCharacters(in: .whitespaces)) }
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        var value = parts.count > 1 ? String(parts[1]) : ""
        if value.hasPrefix(" ") { value.removeFirst() }
        switch parts[0] {
        case "event": state.name = value
        case "data": state.data.append(value)
        case "id": state.id = value
        default: break  // retry: and unknown fields
        }
        return nil
    }
}
