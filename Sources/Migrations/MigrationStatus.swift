import Foundation

/// Files compared with the history table: what is applied, pending, edited, missing, or known
/// only to a newer binary.
public struct MigrationStatus: Sendable {
    public enum State: String, Sendable {
        case applied
        case pending
        /// Applied, but the file's checksum changed since.
        case modified
        /// Applied, file gone, and a later file exists: the folder lost it.
        case missingFile = "missing file"
        /// Applied by a newer binary: above this binary's head.
        case unknownToBinary = "unknown to this binary"
    }

    public struct Entry: Sendable {
        public let version: Int
        public let name: String
        public let state: State
        public let fileChecksum: String?
        public let applied: AppliedMigration?
        public let file: MigrationFile?
    }

    public let entries: [Entry]
    public let headVersion: Int

    public init(files: [MigrationFile], history: [AppliedMigration]) {
        let appliedByVersion = Dictionary(history.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
        let fileByVersion = Dictionary(files.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
        let head = files.last?.version ?? 0
        var entries: [Entry] = []
        for version in Set(appliedByVersion.keys).union(fileByVersion.keys).sorted() {
            let file = fileByVersion[version]
            let applied = appliedByVersion[version]
            let state: State
            switch (file, applied) {
            case (let file?, let applied?): state = file.checksum == applied.checksum ? .applied : .modified
            case (_?, nil): state = .pending
            case (nil, _?): state = version > head ? .unknownToBinary : .missingFile
            case (nil, nil): continue
            }
            entries.append(Entry(version: version, name: file?.name ?? applied?.name ?? "", state: state, fileChecksum: file?.checksum, applied: applied, file: file))
        }
        self.entries = entries
        self.headVersion = head
    }

    public var pending: [MigrationFile] { entries.filter { $0.state == .pending }.compactMap(\.file) }
    /// The highest version recorded in the database.
    public var databaseVersion: Int { entries.filter { $0.applied != nil }.map(\.version).max() ?? 0 }
    /// True when a newer binary has migrated the database past this one.
    public var databaseIsAhead: Bool { entries.contains { $0.state == .unknownToBinary } }

    /// Problems that stop `serve` and `migrate up`: edited or missing applied files, and
    /// pending files below the applied head (they would run out of order).
    public var problems: [MigrationError] {
        var problems: [MigrationError] = []
        let highestApplied = entries.filter { $0.applied != nil && $0.state != .unknownToBinary }.map(\.version).max() ?? 0
        for entry in entries {
            switch entry.state {
            case .modified:
                problems.append(
                    MigrationError(
                        .modifiedFile,
                        "\(entry.file!.fileName) was edited after it was applied (checksum \(entry.applied!.checksum.prefix(12))… in the database, \(entry.fileChecksum!.prefix(12))… on disk); write a new migration instead"
                    ))
            case .missingFile:
                problems.append(MigrationError(.missingFile, "migration \(String(format: "%04d", entry.version))_\(entry.name).sql was applied but is missing from the migrations folder"))
            case .pending where entry.version < highestApplied:
                problems.append(MigrationError(.outOfOrder, "\(entry.file!.fileName) is pending but version \(highestApplied) is already applied; renumber it above \(highestApplied)"))
            default:
                break
            }
        }
        return problems
    }
}
