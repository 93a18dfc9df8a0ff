import Foundation

/// The migration files of one folder, or those compiled into the binary, in version order.
public struct MigrationDirectory: Sendable {
    /// The folder; nil for the migrations compiled into the binary (`bundled`).
    public let url: URL?
    public let files: [MigrationFile]

    /// The highest version this binary knows.
    public var headVersion: Int { files.last?.version ?? 0 }

    /// Where they come from, for messages.
    public var source: String { url.map { "the migrations folder \($0.path)" } ?? "the migrations compiled into this binary" }

    /// The migrations of `migrations/` as this binary was built (scripts/bundle-migrations):
    /// what `migrate`, `serve` and every command use unless `--migrations-dir` names a
    /// folder, so an installed binary needs nothing beside it.
    public static func bundled() throws(MigrationError) -> MigrationDirectory {
        var files: [MigrationFile] = []
        for (name, base64) in BundledMigrations.files {
            guard let data = Data(base64Encoded: base64) else { throw MigrationError(.directoryUnreadable, "the compiled-in \(name) is not base64") }
            files.append(try MigrationFile(fileName: name, contents: data))
        }
        return try MigrationDirectory(url: nil, files: files)
    }

    private init(url: URL?, files unsorted: [MigrationFile]) throws(MigrationError) {
        let files = unsorted.sorted { $0.version < $1.version }
        for (previous, next) in zip(files, files.dropFirst()) where previous.version == next.version {
            throw MigrationError(.duplicateVersion, "\(previous.fileName) and \(next.fileName) share version \(next.version)")
        }
        self.url = url
        self.files = files
    }

    public init(url: URL) throws(MigrationError) {
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
        try self.init(url: url, files: files)
    }
}
