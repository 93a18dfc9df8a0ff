/// What a device's event stream writes next. A stream holds at most one of each kind
/// pending, so a device that reads slowly costs the server nothing more: a newer change
/// replaces an unsent one (the device pulls everything anyway).
enum StreamSignal: Sendable, Equatable {
    /// The user's records changed up to `serverVersion` (in `collections`, a hint).
    case changed(serverVersion: Int64, collections: [String])
    /// Pull now: the server may have missed a notification (its listener reconnected).
    case pull(reason: String)
    /// A comment line, to keep the connection open.
    case heartbeat
    /// The stream ends (server shutdown, lifetime); the device reconnects after `retry`.
    case close(reason: String)

    /// The Server-Sent Events text of the signal.
    var text: String {
        switch self {
        case .changed(let version, let collections):
            let names = collections.map { "\"\($0)\"" }.joined(separator: ",")
            return "id: \(version)\nevent: change\ndata: {\"serverVersion\":\(version),\"collections\":[\(names)]}\n\n"
        case .pull(let reason):
            return "event: pull\ndata: {\"reason\":\"\(reason)\"}\n\n"
        case .heartbeat:
            return ": heartbeat\n\n"
        case .close(let reason):
            return "retry: 1000\nevent: close\ndata: {\"reason\":\"\(reason)\"}\n\n"
        }
    }
}
