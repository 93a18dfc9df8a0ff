import EmbeddedPostgres
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What `ChildProcess` (`pg_ctl`, `initdb`) hands its child: standard input, output and error,
/// nothing else. A socket NIO accepted is not close-on-exec; before, a `postgres` started while a
/// server ran kept that server's client connections open for as long as it ran, and a connection
/// the server closed never closed for its client (`SlowClientTests` saw it under load).
@Suite struct ChildProcessTests {
    @Test func aChildInheritsOnlyItsStandardDescriptors() throws {
        // Opened as NIO opens an accepted connection: without close-on-exec.
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let fileDescriptor = open("/dev/null", O_RDONLY)
        defer {
            close(socketDescriptor)
            close(fileDescriptor)
        }
        #expect(socketDescriptor > 2 && fileDescriptor > 2)
        #expect(fcntl(socketDescriptor, F_GETFD) & FD_CLOEXEC == 0, "the case at hand: a descriptor a child would inherit")
        let outcome = try ChildProcess.run(
            "/bin/sh", ["-c", "ls /proc/$$/fd"], environment: ["PATH": "/usr/bin:/bin"], directory: FileManager.default.temporaryDirectory)
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(Set(outcome.output.split(whereSeparator: \.isWhitespace).map(String.init)) == ["0", "1", "2"], "the child's descriptors: \(outcome.output)")
    }
}
