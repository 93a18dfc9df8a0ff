import Foundation

/// A child's output for a caller that reads it once the child has exited: written to a
/// temporary file, not a pipe. A pipe's write end is inherited by any child spawned elsewhere in
/// the process at that moment (the test suite's PostgreSQL, another test's server); reading the
/// pipe to its end then waits for that child as well — for PostgreSQL, until the suite ends, so
/// the suite never did. A file ends where the child stopped writing.
public final class CapturedOutput: Sendable {
    public let url: URL
    public let handle: FileHandle

    public init() throws {
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("habitsync-output-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw HarnessError("cannot create \(url.path)") }
        handle = try FileHandle(forWritingTo: url)
    }

    /// What the child wrote; the file is removed.
    public func text() -> String {
        try? handle.close()
        defer { try? FileManager.default.removeItem(at: url) }
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }
}
