import Foundation
import GRDB

/// Sync by itself: after local writes (debounced), periodically, and when the server has
/// something new — its event stream (`realtime: true`) or `signal()`. One sync at a time; triggers that
/// arrive while one runs are folded into a single sync after it.
///
/// ```swift
/// let autoSync = AutoSync(engine: engine)
/// let task = Task { for await result in autoSync.start() { /* update the UI */ } }
/// ```
public final class AutoSync: Sendable {
    public let engine: SyncEngine
    /// How long after a local write the sync starts, so that a burst of edits is one push.
    public let debounce: Duration
    /// How often it syncs without a trigger (pulls what other devices did).
    public let interval: Duration
    public let policy: RetryPolicy
    /// Follows the server's event stream and syncs on each change it announces.
    public let realtime: Bool
    private let sleep: @Sendable (Duration) async throws -> Void
    private let triggers: AsyncStream<Trigger>
    private let trigger: AsyncStream<Trigger>.Continuation

    enum Trigger: Sendable { case localWrite, periodic, signal }

    public init(
        engine: SyncEngine, debounce: Duration = .seconds(2), interval: Duration = .seconds(300), policy: RetryPolicy = RetryPolicy(),
        realtime: Bool = false, sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.engine = engine
        self.realtime = realtime
        self.debounce = debounce
        self.interval = interval
        self.policy = policy
        self.sleep = sleep
        // At most one trigger waits: any number of them during a sync make one sync after it.
        (triggers, trigger) = AsyncStream.makeStream(of: Trigger.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The server has something new for this user (a realtime message): sync now.
    public func signal() { trigger.yield(.signal) }

    /// Runs until the returned sequence's consumer stops (or its task is cancelled), or a sync
    /// finds the account erased (its failure is the last result); yields the result of every sync.
    public func start() -> AsyncStream<Result<SyncEngine.Report, any Error>> {
        let (results, output) = AsyncStream.makeStream(of: Result<SyncEngine.Report, any Error>.self)
        let worker = Task { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.watchLocalWrites() }
                group.addTask { await self.tick() }
                if self.realtime { group.addTask { await self.followServerEvents() } }
                group.addTask {
                    for await trigger in self.triggers {
                        if trigger == .localWrite { try? await self.sleep(self.debounce) }
                        if Task.isCancelled { break }
                        let result: Result<SyncEngine.Report, any Error>
                        do {
                            result = .success(try await self.engine.syncRetrying(policy: self.policy, sleep: { try await self.sleep(.seconds($0)) }))
                        } catch {
                            result = .failure(error)
                        }
                        output.yield(result)
                        // An erased account never syncs again: stop (the sequence ends).
                        if case .failure(let error) = result, error as? SyncError == .accountErased { break }
                    }
                }
                await group.next()
                group.cancelAll()
            }
            output.finish()
        }
        output.onTermination = { _ in
            worker.cancel()
            self.trigger.finish()
        }
        return results
    }

    /// Each local edit moves the outbox sequence; a change of it is a trigger.
    private func watchLocalWrites() async {
        let edits = ValueObservation.tracking { try LocalSchema.state($0, "outbox_sequence") }.removeDuplicates()
        do {
            var first = true
            for try await _ in edits.values(in: engine.store.database) {
                // The first value is the state at start: pending edits from before sync too.
                if first, try engine.store.pendingCount() == 0 { first = false; continue }
                first = false
                trigger.yield(.localWrite)
            }
        } catch {}
    }

    /// The event stream, reopened whenever it ends (the server closes streams after a
    /// while, or on shutdown) or fails (waiting as `policy` says, longer after each failure).
    private func followServerEvents() async {
        var lastEventID: String?
        var failures = 0
        var retryAfter: Double?
        while !Task.isCancelled {
            do {
                for try await message in try await engine.serverEvents(lastEventID: lastEventID) {
                    failures = 0
                    guard case .event(let name, let id, _) = message else { continue }
                    if let id { lastEventID = id }
                    if name == "change" || name == "pull" { signal() }
                }
            } catch {
                failures += 1
                if case .retryLater(let seconds)? = error as? SyncError { retryAfter = seconds } else { retryAfter = nil }
            }
            let wait = failures == 0 ? 0.5 : policy.delay(attempt: min(failures - 1, 16), retryAfter: retryAfter, random: Double.random(in: 0...1))
            do { try await sleep(.seconds(wait)) } catch { return }
        }
    }

    private func tick() async {
        while !Task.isCancelled {
            do { try await sleep(interval) } catch { return }
            trigger.yield(.periodic)
        }
    }
}
