import Foundation

/// The migration files of one folder, in version order.
public struct MigrationDirectory: Sendable {
    public let url: URL
    public let files: [MigrationFile]

    /// The highest version this binary knows.
    public var headVersion: Int { files.last?.version ?? 0 }

    public init(url: URL) throws(MigrationError) {
        self.url = url
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw MigrationError(.directoryUnreadable, "cannot read the migrations folder \(url.path): \(error.localizedDescription)")
        }
        var files: [MigrationFile] = []
        for name in names where name.hasSuffix(".sql") {
            guard let data = FileManager.default.contents(atPath: url.appendingPathComponent(name).path) else {
                throw MigrationError(.directoryUnreadable, "cannot read \(name)")
            }
            files.append(try MigrationFile(fileName: name, contents: data))
        }
        files.sort { $0.version < $1.version }
        for (previous, next) in zip(files, files.dropFirst()) where previous.version == next.version {
            throw MigrationError(.duplicateVersion, "\(previous.fileName) and \(next.fileName) share version \(next.version)")
        }
        self.files = files
    }

    /// Where the binary looks when `--migrations-dir` is not given: the folder shipped beside
    /// the executable (the container image and release archives), then `../share/habitsync-server/migrations`,
    /// then `./migrations` (a source checkout).
    public static func defaultLocation(executable: URL = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()) -> URL {
        let binDir = executable.deletingLastPathComponent()
        let candidates = [
            binDir.appendingPathComponent("migrations"),
            binDir.deletingLastPathComponent().appendingPathComponent("share/habitsync-server/migrations"),
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("migrations"),
        ]
        var isDirectory: ObjCBool = false
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory) && isDirectory.boolValue {
            return candidate
        }
        // The last candidate (./migrations) is the default when none exists; the caller's
        // error names it.
        return candidates[candidates.count - 1]
    }
}
