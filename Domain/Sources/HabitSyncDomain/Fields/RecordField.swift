import Foundation

/// One field of a collection's record, declared once: its wire name, the columns that store
/// it with their types, how concurrent writes of it settle, its value in each column and its
/// canonical wire value. The store's columns and values (`SyncTable`), the canonical records the
/// field merge compares (`CanonicalFields`) and the parity tests against the schema, the
/// record-rendering SQL functions and `openapi.yaml` all read these declarations
/// (`RecordFields`).
public struct RecordField: Sendable {
    public let name: String
    public let columns: [StoredColumn]
    public let merge: FieldMergeRule
    /// The field's value in each of `columns`, in order.
    public let stored: @Sendable (ValidatedRecord) -> [FieldValue]
    /// The field's value on the wire, canonical.
    public let canonical: @Sendable (ValidatedRecord) -> JSONValue
    /// The field's canonical wire value from its columns' values as read back (in `columns`
    /// order): what the record-rendering SQL function renders of them, so that a stored row
    /// read as typed columns compares with a validated record's `canonical`.
    public let fromColumns: @Sendable ([FieldValue]) -> JSONValue

    public init(
        name: String, columns: [StoredColumn], merge: FieldMergeRule, stored: @escaping @Sendable (ValidatedRecord) -> [FieldValue],
        canonical: @escaping @Sendable (ValidatedRecord) -> JSONValue, fromColumns: @escaping @Sendable ([FieldValue]) -> JSONValue
    ) {
        self.name = name
        self.columns = columns
        self.merge = merge
        self.stored = stored
        self.canonical = canonical
        self.fromColumns = fromColumns
    }
}

/// One field of `Record` as its record type declares it: how the wire reads and validates it
/// (`read`, in declaration order, which is the order rejections are found in), and its
/// declaration for everything else (`erased`).
struct DeclaredField<Record: Sendable>: Sendable {
    typealias Read = @Sendable (inout Record, inout FieldReader) throws(ChangeRejection) -> Void
    let erased: RecordField
    let read: Read
}

/// Declares the fields of one record type: `field` for a field in one column (its canonical
/// value is its column's), `field(_:columns:…)` for one stored in several (which says how its
/// columns make its wire value). `read` reads the field from the wire into the record with its
/// rule (a rule across fields is the record's).
struct RecordFieldDeclarer<Record: Sendable>: Sendable {
    let record: @Sendable (ValidatedRecord) -> Record?
    let merge: FieldMergeRule

    init(merge: FieldMergeRule, record: @escaping @Sendable (ValidatedRecord) -> Record?) {
        self.merge = merge
        self.record = record
    }

    func field(
        _ name: String, _ column: String, _ type: StoredColumn.SQLType, merge: FieldMergeRule? = nil, read: @escaping DeclaredField<Record>.Read,
        _ value: @escaping @Sendable (Record) -> FieldValue
    ) -> DeclaredField<Record> {
        let record = self.record
        return DeclaredField(
            erased: RecordField(
                name: name, columns: [StoredColumn(column, type)], merge: merge ?? self.merge,
                stored: { validated in record(validated).map { [value($0)] } ?? [] },
                canonical: { validated in record(validated).map { value($0).canonical } ?? .null },
                fromColumns: { $0.first?.canonical ?? .null }),
            read: read)
    }

    func field(
        _ name: String, columns: [StoredColumn], merge: FieldMergeRule? = nil, read: @escaping DeclaredField<Record>.Read,
        stored: @escaping @Sendable (Record) -> [FieldValue], canonical: @escaping @Sendable (Record) -> JSONValue,
        fromColumns: @escaping @Sendable ([FieldValue]) -> JSONValue
    ) -> DeclaredField<Record> {
        let record = self.record
        return DeclaredField(
            erased: RecordField(
                name: name, columns: columns, merge: merge ?? self.merge,
                stored: { validated in record(validated).map(stored) ?? [] },
                canonical: { validated in record(validated).map(canonical) ?? .null }, fromColumns: fromColumns),
            read: read)
    }
}

extension Array {
    /// Reads every declared field into `record`, in declaration order.
    func read<Record>(into record: inout Record, _ reader: inout FieldReader) throws(ChangeRejection) where Element == DeclaredField<Record> {
        for field in self { try field.read(&record, &reader) }
    }
}
