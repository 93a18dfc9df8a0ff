import Foundation

/// How a child process ended.
public struct ProcessTermination: Sendable, Equatable {
    /// The exit status, or the signal's number when a signal ended it.
    public let status: Int32
    public let bySignal: Bool

    public init(status: Int32, bySignal: Bool) {
        self.status = status
        self.bySignal = bySignal
    }

    /// From a raw `waitpid` status (WIFSIGNALED / WTERMSIG / WEXITSTATUS are macros Swift
    /// cannot import).
    public init(waitStatus raw: Int32) {
        let signal = raw & 0x7f
        self = signal != 0 ? ProcessTermination(status: signal, bySignal: true) : ProcessTermination(status: (raw >> 8) & 0xff, bySignal: false)
    }
}

extension Process {
    /// Waits (polling, never blocking a thread) until the process ends; nil if it still runs
    /// after `timeout`.
    ///
    /// Foundation alone is not trusted to notice: on Linux it learns of an exit when the child's
    /// end of a socket pair closes, so any other process still holding that end (one that
    /// inherited it) hides the exit. Seen once: a `tenant create` child stayed a zombie while
    /// `isRunning` stayed true and a test waited forever. So the child is also reaped here with
    /// `waitpid(…, WNOHANG)`; whichever of the two reaps it first, the status returned here is
    /// the child's.
    public func waitForTermination(timeout: Duration? = nil) async -> ProcessTermination? {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        let pid = processIdentifier
        while true {
            if !isRunning {
                return ProcessTermination(status: terminationStatus, bySignal: terminationReason == .uncaughtSignal)
            }
            var raw: Int32 = 0
            if pid > 0, waitpid(pid, &raw, WNOHANG) == pid { return ProcessTermination(waitStatus: raw) }
            if let deadline, clock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
