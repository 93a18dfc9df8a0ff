import Foundation

/// Which timeline of the server a device last synced in (docs/protocol.md, "Epochs"): the
/// database's epoch, which an operator rotates after restoring a backup, and the account's,
/// which is new when the account starts over after an erasure (`user allow-again`). Written
/// `"<database>.<account>"`, each part 16 lowercase hexadecimal digits; `"<database>"` alone
/// while the user has no row on the server (nothing stored yet).
public struct SyncEpoch: Sendable, Hashable {
    public let database: String
    public let account: String?

    public init?(database: String, account: String?) {
        guard Self.isPart(database), account.map(Self.isPart) ?? true else { return nil }
        self.database = database
        self.account = account
    }

    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return nil }
        self.init(database: String(parts[0]), account: parts.count == 2 ? String(parts[1]) : nil)
    }

    public var text: String { account.map { "\(database).\($0)" } ?? database }

    static func isPart(_ part: String) -> Bool {
        part.utf8.count == 16 && part.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
