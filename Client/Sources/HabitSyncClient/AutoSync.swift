import Foundation
import GRDB

/// Sync by itself: after local writes (debounced), periodically, and when told the server has
/// something new (`signal()`, for a realtime channel). One sync at a time; triggers that
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
    private let sleep: @Sendable (Duration) async throws -> Void
    private let triggers: AsyncStream<Trigger>
    private let trigger: AsyncStream<Trigger>.Continuation

    enum Trigger: Sendable { case localWrite, periodic, signal }

    public init(engine: SyncEngine, debounce: Duration = .seconds(2), interval: Duration = .seconds(300), policy: RetryPolicy = RetryPolicy(),
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.engine = engine
        self.debounce = debounce
        self.interval = interval
        self.policy = policy
        self.sleep = sleep
        // At most one trigger waits: any number of them during a sync make one sync after it.
        (triggers, trigger) = AsyncStream.makeStream(of: Trigger.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The server has something new for this user (a realtime message): sync now.
    public func signal() { trigger.yield(.signal) }

    /// Runs until the returned sequence's consumer stops (or its task is cancelled); yields
    /// the result of every sync.
    public func start() -> AsyncStream<Result<SyncEngine.Report, any Error>> {
        let (results, output) = AsyncStream.makeStream(of: Result<SyncEngine.Report, any Error>.self)
        let worker = Task { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.watchLocalWrites() }
                group.addTask { await self.tick() }
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

    private func tick() async {
        while !Task.isCancelled {
            do { try await sleep(interval) } catch { return }
            trigger.yield(.periodic)
        }
    }
}
