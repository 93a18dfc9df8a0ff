import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What an interrupted harness run must not leave behind: the server processes and the
/// PostgreSQL clusters it started. The server children are not in the terminal's process
/// group, so Ctrl-C alone would leave them running, orphaned, against a stopped database.
public final class HarnessCleanup: Sendable {
    public static let shared = HarnessCleanup()

    private let actions = Mutex<[(id: UUID, action: @Sendable () -> Void)]>([])
    private let interrupted = Atomic<Bool>(false)

    /// Registers something to undo if the run is interrupted; returns a handle to unregister it.
    public func register(_ action: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        actions.withLock { $0.append((id, action)) }
        return id
    }

    public func unregister(_ id: UUID) {
        actions.withLock { $0.removeAll { $0.id == id } }
    }

    /// Runs every registered action once, the most recent first (servers before their database).
    public func runAll() {
        let pending = actions.withLock { actions in
            defer { actions.removeAll() }
            return actions
        }
        for entry in pending.reversed() { entry.action() }
    }

    /// Runs a command's work. Once an interrupt has arrived, the cleanup makes the work fail
    /// (its servers vanish): then this waits for the handler to exit with the interrupt's
    /// status rather than let the command report those failures and exit first.
    public func run<Result>(_ work: () async throws -> Result) async throws -> Result {
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
        while interrupted.load(ordering: .relaxed) { try? await Task.sleep(for: .seconds(60)) }
        return try outcome.get()
    }

    /// On SIGINT or SIGTERM: run every cleanup action, then exit with 128 + the signal. Keep
    /// the returned sources for as long as the handlers should stay installed.
    public static func handleInterrupts() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                HarnessCleanup.shared.interrupted.store(true, ordering: .relaxed)
                FileHandle.standardError.write(Data("interrupted: stopping the servers and databases this run started\n".utf8))
                HarnessCleanup.shared.runAll()
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}
