import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Standard error, written with `write(2)`: text that cannot be written (the stream closed, a
/// reader that went away, a full disk) is dropped and the call says false. `FileHandle.write`
/// traps on such errors, which ended the server when a log reader closed (issue 45). The
/// process ignores SIGPIPE (`HabitSyncEntryPoint`), so a closed pipe is an error here, not a
/// signal.
public enum StandardError {
    @discardableResult
    public static func write(_ text: String) -> Bool { writeAll(text, to: STDERR_FILENO) }

    static func writeAll(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)
        var offset = 0
        return bytes.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            while offset < buffer.count {
                let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}
