import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The process that keeps a running embedded cluster: the one that started it (or adopted it),
/// and stops it when it ends. Recorded in the cluster's folder (`keeper`), so that a cluster
/// left running by a process that is gone (killed, crashed) can be told from one in use, and
/// stopped or removed with the project's own commands.
public struct ClusterKeeper: Sendable, Equatable {
    public let pid: Int32
    /// The process's start time (`/proc/<pid>/stat`, field 22): a pid the kernel has given to
    /// another process since is not mistaken for the keeper.
    public let startTime: UInt64

    static let fileName = "keeper"

    /// This process.
    public static var current: ClusterKeeper? {
        let pid = getpid()
        return startTime(of: pid).map { ClusterKeeper(pid: pid, startTime: $0) }
    }

    /// Whether that process still runs.
    public var isAlive: Bool {
        (kill(pid, 0) == 0 || errno == EPERM) && Self.startTime(of: pid) == startTime
    }

    /// The keeper recorded for the cluster in `directory`, if any.
    public static func recorded(in directory: URL) -> ClusterKeeper? {
        guard let text = try? String(contentsOf: directory.appendingPathComponent(fileName), encoding: .utf8) else { return nil }
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let pid = Int32(fields[0]), pid > 0, let startTime = UInt64(fields[1]) else { return nil }
        return ClusterKeeper(pid: pid, startTime: startTime)
    }

    func record(in directory: URL) throws {
        try "\(pid) \(startTime)\n".write(to: directory.appendingPathComponent(Self.fileName), atomically: true, encoding: .utf8)
    }

    static func clear(in directory: URL) {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(fileName))
    }

    static func startTime(of pid: Int32) -> UInt64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let endOfName = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name (which may hold spaces): field 3 (state) onwards; 22 is the
        // start time.
        let fields = stat[stat.index(after: endOfName)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }
}
