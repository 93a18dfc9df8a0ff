import Foundation
import HabitSyncDomain
import HabitSyncStore
import Synchronization

/// The open event streams of this server, by user: who gets told of a change, and when a
/// stream must write a heartbeat or end. Each stream's pending state is a few fields (see
/// `StreamSignal`), whatever happens and however slowly its device reads.
public final class ChangeStreams: Sendable {
    public let limits: RealtimeLimits

    struct Stream {
        let user: UserKey
        /// The device's id as bytes: a push from another device of the user must reach it
        /// even when the two ids are canonically equivalent text.
        let device: [UInt8]?
        let opened: ContinuousClock.Instant
        var lastWrite: ContinuousClock.Instant
        var lastEvent: ContinuousClock.Instant
        var change: (version: Int64, collections: Set<SyncCollection>)?
        var pull: String?
        var heartbeatDue = false
        var close: String?
        var closeRequested: ContinuousClock.Instant?
        var waiter: CheckedContinuation<StreamSignal?, Never>?
        var ended = false
    }

    struct State {
        var nextID = 0
        var streams: [Int: Stream] = [:]
        var byUser: [UserKey: Set<Int>] = [:]
        var byTenant: [UUID: Int] = [:]
    }

    public enum Refusal: Error, Sendable { case userLimit, serverLimit, tenantLimit }

    private let state = Mutex(State())
    private let clock = ContinuousClock()

    public init(limits: RealtimeLimits = RealtimeLimits()) { self.limits = limits }

    public var openCount: Int { state.withLock { $0.streams.count } }

    /// Opens a stream for a device of a user, or refuses it beyond the limits; `tenantLimit`:
    /// the streams the user's tenant may hold open on this server (its share of its limit).
    func open(tenant: UUID, user: String, device: String?, tenantLimit: Int? = nil) throws(Refusal) -> Int {
        let now = clock.now
        let key = UserKey(tenant: tenant, user: user)
        return try state.withLock { state throws(Refusal) -> Int in
            guard state.streams.count < limits.streams else { throw .serverLimit }
            guard state.byUser[key, default: []].count < limits.streamsPerUser else { throw .userLimit }
            if let tenantLimit, state.byTenant[tenant, default: 0] >= tenantLimit { throw .tenantLimit }
            state.nextID += 1
            state.byTenant[tenant, default: 0] += 1
            state.streams[state.nextID] = Stream(user: key, device: device.map { Array($0.utf8) }, opened: now, lastWrite: now, lastEvent: now)
            state.byUser[key, default: []].insert(state.nextID)
            return state.nextID
        }
    }

    func remove(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<StreamSignal?, Never>? in
            guard let stream = state.streams.removeValue(forKey: id) else { return nil }
            state.byUser[stream.user]?.remove(id)
            if state.byUser[stream.user]?.isEmpty == true { state.byUser[stream.user] = nil }
            state.byTenant[stream.user.tenant, default: 1] -= 1
            if state.byTenant[stream.user.tenant] == 0 { state.byTenant[stream.user.tenant] = nil }
            return stream.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next thing stream `id` writes, waiting until there is one; nil once it has ended.
    func next(_ id: Int) async -> StreamSignal? {
        await withCheckedContinuation { continuation in
            let now = clock.now
            let ready = state.withLock { state -> StreamSignal?? in
                guard var stream = state.streams[id], !stream.ended else { return .some(nil) }
                if let signal = Self.take(&stream) {
                    stream.lastWrite = now
                    if case .heartbeat = signal {} else { stream.lastEvent = now }
                    state.streams[id] = stream
                    return .some(signal)
                }
                stream.waiter = continuation
                state.streams[id] = stream
                return .none
            }
            if case .some(let signal) = ready { continuation.resume(returning: signal) }
        }
    }

    /// The most urgent pending signal, taken off the stream.
    private static func take(_ stream: inout Stream) -> StreamSignal? {
        if let reason = stream.close {
            stream.ended = true
            return .close(reason: reason)
        }
        if let reason = stream.pull {
            stream.pull = nil
            stream.change = nil
            return .pull(reason: reason)
        }
        if let change = stream.change {
            stream.change = nil
            return .changed(serverVersion: change.version, collections: change.collections.sorted { $0.rawValue < $1.rawValue })
        }
        if stream.heartbeatDue {
            stream.heartbeatDue = false
            return .heartbeat
        }
        return nil
    }

    /// Changes `id`'s pending state and wakes its writer if it waits.
    private func update(_ ids: some Sequence<Int>, now: ContinuousClock.Instant, _ change: (inout Stream) -> Void) -> Int {
        let woken = state.withLock { state -> [(CheckedContinuation<StreamSignal?, Never>, StreamSignal)] in
            var woken: [(CheckedContinuation<StreamSignal?, Never>, StreamSignal)] = []
            for id in ids {
                guard var stream = state.streams[id], !stream.ended else { continue }
                change(&stream)
                if stream.close != nil, stream.closeRequested == nil { stream.closeRequested = now }
                if let waiter = stream.waiter, let signal = Self.take(&stream) {
                    stream.waiter = nil
                    stream.lastWrite = now
                    if case .heartbeat = signal {} else { stream.lastEvent = now }
                    woken.append((waiter, signal))
                }
                state.streams[id] = stream
            }
            return woken
        }
        for (waiter, signal) in woken { waiter.resume(returning: signal) }
        return woken.count
    }

    /// A push committed: every stream of the user but the pushing device's is told.
    /// Returns how many streams were told at once (the others had a signal pending already).
    @discardableResult
    func deliver(_ notice: ChangeNotice) -> Int {
        let key = UserKey(tenant: notice.tenantID, user: notice.userID)
        let pusher: [UInt8]? = Array(notice.deviceID.utf8)
        let ids = state.withLock { state in (state.byUser[key] ?? []).filter { state.streams[$0]?.device != pusher } }
        return update(ids, now: clock.now) { stream in
            let collections = Set(notice.collections).union(stream.change?.collections ?? [])
            stream.change = (max(notice.serverVersion, stream.change?.version ?? 0), collections)
        }
    }

    /// Tells one stream the user is ahead of what its device has seen.
    func behind(_ id: Int, serverVersion: Int64) {
        _ = update([id], now: clock.now) { $0.change = (serverVersion, []) }
    }

    /// Every stream should pull (a notification may have been missed).
    @discardableResult
    func pullEverywhere(reason: String) -> Int {
        update(state.withLock { Array($0.streams.keys) }, now: clock.now) { $0.pull = reason }
    }

    /// Ends one stream (its request is being drained) or all of them.
    func close(_ ids: [Int]? = nil, reason: String) {
        _ = update(ids ?? state.withLock { Array($0.streams.keys) }, now: clock.now) { $0.close = reason }
    }

    /// Heartbeats and lifetimes: called every `limits.tick`. A stream told to close that no
    /// writer took the close from within two heartbeats has no writer (its response never
    /// started): it is forgotten.
    func tick() {
        let now = clock.now
        let abandoned = state.withLock { state in
            state.streams.filter { _, stream in
                stream.waiter == nil && stream.closeRequested.map { now - $0 >= limits.heartbeat * 2 } == true
            }.map(\.key)
        }
        for id in abandoned { remove(id) }
        _ = update(state.withLock { Array($0.streams.keys) }, now: now) { stream in
            if now - stream.opened >= limits.maximumLifetime {
                stream.close = "lifetime"
            } else if now - stream.lastEvent >= limits.idleLifetime {
                stream.close = "idle"
            } else if now - stream.lastWrite >= limits.heartbeat {
                stream.heartbeatDue = true
            }
        }
    }
}
