import NIOCore
import Synchronization

/// The server's open HTTP connections: how many, and which wait idle for a request. At the cap
/// a new connection takes the place of the one idle the longest (nginx reuses keep-alive
/// connections the same way); with none idle it is refused (closed at once). Either way the
/// new descriptor is accepted and the accept loop runs on: without a cap, running out of
/// descriptors would leave every new client waiting in the backlog.
final class ConnectionRegistry: Sendable {
    enum Admission {
        case admitted(id: Int)
        case refused
    }

    private struct Entry {
        let channel: any Channel
        var idleSince: NIODeadline?
    }

    private struct State {
        var nextID = 0
        var entries: [Int: Entry] = [:]
    }

    let maximum: Int
    private let state = Mutex(State())
    private let metrics: ServerMetrics

    init(maximum: Int, metrics: ServerMetrics) {
        self.maximum = maximum
        self.metrics = metrics
    }

    var openCount: Int { state.withLock { $0.entries.count } }

    /// Registers a new connection (idle until its first request head arrives).
    func open(_ channel: any Channel, now: NIODeadline) -> Admission {
        let (admission, evicted) = state.withLock { state -> (Admission, (any Channel)?) in
            var evicted: (any Channel)?
            if state.entries.count >= maximum {
                let idle = state.entries.compactMap { id, entry in entry.idleSince.map { (id: id, since: $0, channel: entry.channel) } }
                guard let oldest = idle.min(by: { $0.since < $1.since }) else { return (.refused, nil) }
                evicted = oldest.channel
                state.entries[oldest.id] = nil
            }
            state.nextID += 1
            state.entries[state.nextID] = Entry(channel: channel, idleSince: now)
            return (.admitted(id: state.nextID), evicted)
        }
        if let evicted {
            metrics.recordConnectionCut(reason: "evicted_idle")
            evicted.close(promise: nil)
        }
        if case .refused = admission { metrics.recordConnectionCut(reason: "refused_at_cap") }
        return admission
    }

    func markIdle(_ id: Int, since: NIODeadline) { state.withLock { $0.entries[id]?.idleSince = since } }

    func markBusy(_ id: Int) { state.withLock { $0.entries[id]?.idleSince = nil } }

    func close(_ id: Int) { _ = state.withLock { $0.entries.removeValue(forKey: id) } }
}
