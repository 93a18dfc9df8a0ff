import CLibPQ
import Foundation
import Synchronization

/// One connection that `LISTEN`s on a channel and hands its notifications to Swift, for a
/// whole process. It runs on a thread of its own (waiting on the socket with `poll`, never on
/// an event loop or the cooperative pool) and reconnects when the connection is lost — a
/// PostgreSQL restart, a terminated backend. Notifications sent while it was away are lost
/// (PostgreSQL keeps none for absent listeners), so after every reconnect it says
/// `.listening(reconnected: true)`: whoever relies on it must assume it missed something.
public final class PGListener: Sendable {
    public enum Event: Sendable, Equatable {
        /// `LISTEN` is in place; `reconnected` after the first time.
        case listening(reconnected: Bool)
        case notification(payload: String)
        /// The connection was lost; reconnecting.
        case lost
    }

    public let channel: String
    public let events: AsyncStream<Event>
    private let output: AsyncStream<Event>.Continuation
    private let configuration: PGConnectionConfiguration
    private let stopped = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// Whether the thread has ended (or never started), and who waits for it to.
    private let ended = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    /// How often the thread wakes to see whether it should stop, and waits between attempts
    /// to reconnect.
    private let wakeMilliseconds: Int32 = 200

    public init(configuration: PGConnectionConfiguration, channel: String) {
        self.configuration = configuration
        self.channel = channel
        (events, output) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(10_000))
    }

    /// Starts the listening thread (once).
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "pg-listener"
        thread.start()
    }

    /// Stops the thread within `wakeMilliseconds`; `events` then finishes.
    public func stop() { stopped.store(true, ordering: .relaxed) }

    /// Stops the thread and returns once it has ended, so nothing of libpq runs on it when
    /// the process exits (a thread inside `PQconnectdbParams` while `exit` tears down the
    /// process crashed it).
    public func stopAndWait() async {
        stop()
        if !started.exchange(true, ordering: .relaxed) { finishThread() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = ended.withLock { ended in
                if !ended.done { ended.waiters.append(continuation) }
                return ended.done
            }
            if done { continuation.resume() }
        }
    }

    private func finishThread() {
        output.finish()
        let waiters = ended.withLock { ended in
            ended.done = true
            defer { ended.waiters = [] }
            return ended.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private var isStopped: Bool { stopped.load(ordering: .relaxed) }

    private func run() {
        var listenedBefore = false
        while !isStopped {
            if let pointer = connectAndListen() {
                output.yield(.listening(reconnected: listenedBefore))
                listenedBefore = true
                receive(on: pointer)
                PQfinish(pointer)
                if !isStopped { output.yield(.lost) }
            }
            if !isStopped { usleep(useconds_t(wakeMilliseconds) * 1000) }
        }
        finishThread()
    }

    private func connectAndListen() -> OpaquePointer? {
        guard let pointer = try? openHandle(configuration, applicationSuffix: "-listener") else { return nil }
        guard let result = PQexec(pointer, "LISTEN " + PGQuery.quoteIdentifier(channel)) else {
            PQfinish(pointer)
            return nil
        }
        let listening = PQresultStatus(result) == PGRES_COMMAND_OK
        PQclear(result)
        if !listening { PQfinish(pointer); return nil }
        return pointer
    }

    /// Until the connection is lost or `stop()`: waits for the socket, reads, hands over.
    private func receive(on pointer: OpaquePointer) {
        while !isStopped {
            var descriptor = pollfd(fd: PQsocket(pointer), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, wakeMilliseconds)
            if ready < 0 && errno != EINTR { return }
            if ready > 0 {
                guard PQconsumeInput(pointer) == 1 else { return }
            }
            while let notification = PQnotifies(pointer) {
                let payload = notification.pointee.extra.map { String(cString: $0) } ?? ""
                PQfreemem(notification)
                output.yield(.notification(payload: payload))
            }
            if PQstatus(pointer) != CONNECTION_OK { return }
        }
    }
}
