import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program to completion with `posix_spawn` and `waitpid`, its output captured in a
/// temporary file. Foundation's `Process` waits for its output pipes to close, which never
/// happens when the program leaves a daemon behind (as `pg_ctl start` does).
public enum ChildProcess {
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
    }

    public static func run(_ executable: String, _ arguments: [String], environment: [String: String], directory: URL) throws -> Outcome {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("habitsync-\(UUID().uuidString).out").path
        let outputDescriptor = open(outputPath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard outputDescriptor >= 0 else { throw EmbeddedPostgresError("could not create \(outputPath)") }
        // Unlinked at once, read back through the descriptor: a process killed while its
        // child runs (a server stopped with SIGKILL during `pg_ctl`) leaves no file behind.
        unlink(outputPath)
        defer { close(outputDescriptor) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outputDescriptor, 1)
        posix_spawn_file_actions_adddup2(&actions, outputDescriptor, 2)
        closeInheritedDescriptors(&actions)

        // `env -C` sets the child's working directory (posix_spawn's addchdir is not importable).
        let argv = (["/usr/bin/env", "-C", directory.path, executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw EmbeddedPostgresError("could not start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw EmbeddedPostgresError("waiting for \(executable) failed") }
        }
        let output = readAll(outputDescriptor)
        // WIFEXITED / WEXITSTATUS are macros Swift cannot import.
        let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Outcome(status: exitStatus, output: output)
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift does not import.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// The child gets standard input, output and error only. Sockets NIO accepts are not
    /// close-on-exec: a `postgres` that `pg_ctl start` leaves running would hold every
    /// connection open at that moment for its whole life, and a connection the server closes
    /// would never close for its client. Where glibc lacks `closefrom`, the descriptors open now
    /// are named one by one (one opened meanwhile may still pass; FileManager reads the
    /// directory's entries by their length, unlike Foundation's `Process`).
    public static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"),
            unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3) == 0
        {
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    /// The file's text from its start (the child moved the shared offset to its end).
    private static func readAll(_ descriptor: Int32) -> String {
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { return "" }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += chunk[..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
