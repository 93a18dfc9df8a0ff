import EmbeddedPostgres
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn`, for the harness and the tests instead of
/// Foundation's `Process`.
///
/// `Process.run()` in Swift 6.3.1's Foundation lists `/proc/self/fd` to close the descriptors
/// a child must not inherit, copying each entry's whole 256-byte `d_name`: now and then an entry
/// sits at the end of glibc's buffer and the copy reads into an unmapped page (SIGSEGV in
/// `__memcpy_avx512_unaligned_erms` under `Process.run()`; swift-corelibs-foundation #5472). The
/// suite's process holds hundreds of descriptors and starts hundreds of children, and lost a
/// whole run to it. Here the kernel closes them (`closefrom`, glibc 2.34).
public final class SpawnedChild: Sendable {
    public let pid: pid_t
    /// How it ended, once reaped.
    private let termination = Mutex<ProcessTermination?>(nil)

    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        case null
        /// A file, created or truncated.
        case file(URL)
        /// A file, appended to.
        case appending(URL)
    }

    private init(pid: pid_t) {
        self.pid = pid
    }

    /// Starts `executable` with `arguments` and exactly `environment`, in `directory` (nil:
    /// this process's), its standard input from /dev/null and the descriptors of this process
    /// closed but for the three standard ones.
    public static func spawn(
        _ executable: URL, _ arguments: [String], environment: [String: String], directory: URL? = nil, output: Stream = .null, error: Stream = .null
    ) throws -> SpawnedChild {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (descriptor, stream) in [(Int32(1), output), (Int32(2), error)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
            case .file(let url): posix_spawn_file_actions_addopen(&actions, descriptor, url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .appending(let url): posix_spawn_file_actions_addopen(&actions, descriptor, url.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            }
        }
        ChildProcess.closeInheritedDescriptors(&actions)
        // `env -C` sets the child's working directory (posix_spawn's addchdir is not importable).
        let program = directory == nil ? executable.path : "/usr/bin/env"
        let prefix = directory.map { ["/usr/bin/env", "-C", $0.path, executable.path] } ?? [executable.path]
        let argv = (prefix + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
        guard spawned == 0 else { throw HarnessError("could not start \(executable.path): \(String(cString: strerror(spawned)))") }
        return SpawnedChild(pid: pid)
    }

    /// Whether it still runs (not yet reaped).
    public var isRunning: Bool { reap() == nil }

    /// Reaps the child if it has ended, without waiting.
    @discardableResult
    public func reap() -> ProcessTermination? {
        termination.withLock { ended in
            if let ended { return ended }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            ended = ProcessTermination(waitStatus: raw)
            return ended
        }
    }

    /// Waits (polling, never blocking a thread) until the child ends; nil if it still runs
    /// after `timeout`.
    public func waitForTermination(timeout: Duration? = nil) async -> ProcessTermination? {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        while true {
            if let ended = reap() { return ended }
            if let deadline, clock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the child ends, however long that takes.
    @discardableResult
    public func exited() async -> ProcessTermination {
        await waitForTermination() ?? ProcessTermination(status: -1, bySignal: false)
    }

    /// Sends `signal` while the child runs (never to a reaped pid, which may be another's).
    public func send(_ signal: Int32) {
        termination.withLock { ended in
            if ended == nil { kill(pid, signal) }
        }
    }
}
