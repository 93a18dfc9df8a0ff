import Crypto
import Foundation

/// One versioned SQL file from `migrations/`: `0001_initial_schema.sql` is version 1, name
/// `initial_schema`.
public struct MigrationFile: Sendable, Equatable {
    /// The first line that makes a file run outside a transaction (for `CREATE INDEX
    /// CONCURRENTLY` and the like). Its statements then run one by one, each committed.
    public static let noTransactionMarker = "-- habitsync:no-transaction"

    public let version: Int
    public let name: String
    public let fileName: String
    public let sql: String
    /// Hex SHA-256 of the file's bytes.
    public let checksum: String
    public let runsInTransaction: Bool

    public init(fileName: String, contents: Data) throws(MigrationError) {
        guard let parsed = Self.parseFileName(fileName) else {
            throw MigrationError(.invalidFileName, "\(fileName): migration files are named NNNN_description.sql (digits, an underscore, lower-case letters, digits and underscores)")
        }
        guard let sql = String(data: contents, encoding: .utf8) else {
            throw MigrationError(.invalidFileName, "\(fileName) is not valid UTF-8")
        }
        self.version = parsed.version
        self.name = parsed.name
        self.fileName = fileName
        self.sql = sql
        self.checksum = SHA256.hash(data: contents).map { String(format: "%02x", $0) }.joined()
        let firstLine = sql.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        self.runsInTransaction = firstLine.trimmingWhitespace() != Self.noTransactionMarker
    }

    static func parseFileName(_ fileName: String) -> (version: Int, name: String)? {
        guard fileName.hasSuffix(".sql") else { return nil }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { return nil }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard digits.count >= 4, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let version = Int(digits), version > 0,
            !name.isEmpty, name.allSatisfy({ ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "_" })
        else { return nil }
        return (version, String(name))
    }
}
