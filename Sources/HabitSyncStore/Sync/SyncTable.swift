import Foundation
import HabitSyncDomain
import LibPQClient

/// How one collection's records map onto its table's data columns, from the collection's field
/// declarations (`RecordFields`). The set-based statements of `SyncTableSQL` are generated from
/// this, so each collection's SQL has the same shape.
struct SyncTable: Sendable {
    struct Column: Sendable {
        let name: PGFragment
        /// The SQL type the text value is cast to.
        let type: PGFragment
        let declared: StoredColumn
    }

    let collection: SyncCollection
    let fields: [RecordField]
    let columns: [Column]

    var table: PGFragment { .identifier(collection.table) }

    init(_ collection: SyncCollection) {
        self.collection = collection
        fields = RecordFields.of(collection) ?? []
        columns = fields.flatMap(\.columns).map { Column(name: .identifier($0.name), type: Self.sqlType($0.type), declared: $0) }
    }

    /// The record's values as text, in `columns` order.
    func values(_ record: ValidatedRecord) -> [String?] {
        fields.flatMap { $0.stored(record) }.map(SQLText.of)
    }

    /// The index of a field's (first) column in `columns` and `values`.
    func columnIndex(ofField name: String) -> Int? {
        var index = 0
        for field in fields {
            if field.name == name { return index }
            index += field.columns.count
        }
        return nil
    }

    static func sqlType(_ type: StoredColumn.SQLType) -> PGFragment {
        switch type {
        case .text: "text"
        case .int2: "int2"
        case .int4: "int4"
        case .float8: "float8"
        case .bool: "bool"
        case .uuid: "uuid"
        case .date: "date"
        case .time: "time"
        case .timestamptz: "timestamptz"
        case .textArray: "text[]"
        case .timestamptzArray: "timestamptz[]"
        }
    }

    static let habits = SyncTable(.habits)
    static let reminders = SyncTable(.reminders)
    static let dailyProgress = SyncTable(.dailyProgress)
    static let focusSessions = SyncTable(.focusSessions)
    static let selectedApps = SyncTable(.selectedApps)
    static let userSettings = SyncTable(.userSettings)
    static let xpTransactions = SyncTable(.xpTransactions)
    static let usageEvents = SyncTable(.usageEvents)
    static let achievements = SyncTable(.achievements)
}
