import HabitSyncDomain

/// What a device's event stream writes next. A stream holds at most one of each kind
/// pending, so a device that reads slowly costs the server nothing more: a newer change
/// replaces an unsent one (the device pulls everything anyway).
enum StreamSignal: Sendable, Equatable {
    /// The user's records changed up to `serverVersion` (in `collections`, a hint).
    case changed(serverVersion: Int64, collections: [SyncCollection])
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
            var data = JSONObjectWriter()
            data.add("serverVersion", version)
            data.add("collections", jsonArray: collections.map { JSONText.string($0.rawValue) })
            return "id: \(version)\nevent: change\ndata: \(data.json)\n\n"
        case .pull(let reason):
            return "event: pull\ndata: \(Self.reason(reason))\n\n"
        case .heartbeat:
            return ": heartbeat\n\n"
        case .close(let reason):
            return "retry: 1000\nevent: close\ndata: \(Self.reason(reason))\n\n"
        }
    }

    private static func reason(_ reason: String) -> String {
        var data = JSONObjectWriter()
        data.add("reason", reason)
        return data.json
    }
}
