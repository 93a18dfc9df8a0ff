import Foundation

/// A record of a collection that merges field by field (and an achievement), as the map of its
/// fields in the form the server stores and pulls return them (the record functions of the
/// migrations): every field present (null when empty), UUIDs in lower case, times in UTC to the
/// millisecond. Two spellings of one value ("…Z" and "…+00:00", upper- and lower-case UUIDs)
/// are one value here, so a field merge compares values, not spellings. Each field's canonical
/// value is its declaration's (`RecordField.canonical`).
public enum CanonicalFields {
    public static func of(_ record: ValidatedRecord) -> [String: JSONValue]? {
        let collection = RecordFields.collection(of: record)
        guard collection.mergesByField || collection == .achievements, let fields = RecordFields.of(collection) else { return nil }
        return Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.canonical(record)) })
    }
}
