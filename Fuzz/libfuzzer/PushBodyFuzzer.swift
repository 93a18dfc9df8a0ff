import Foundation

// libFuzzer entry point for the push body path, compiled together with the sources of
// HabitSyncDomain as one module by scripts/fuzz-parser (so it needs no import): the JSON
// parser, the envelope, every collection's validation, the wire time and date parsers, and
// the text rules. Any crash, trap or sanitizer report is a bug; every input must end as a
// value or a thrown error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPushBody(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let context = ValidationContext.standalone(now: Date(timeIntervalSince1970: 1_795_162_530))
    if let request = try? PushRequest.parse(bytes: bytes, maximumChanges: 1000) {
        for (index, change) in request.changes.enumerated() {
            _ = try? PushChange.validate(change, index: index, context: context)
        }
    }
    if case .object(let fields)? = try? JSONParser.parse(bytes: bytes) {
        for collection in SyncCollection.allCases {
            _ = try? ValidatedRecord.validate(collection, fields, context: context)
        }
        _ = JSONValue.object(fields).storable.jsonText
    }
    let text = String(decoding: bytes, as: UTF8.self)
    _ = WireTime.parse(text)
    _ = LocalDate(text)
    _ = LocalDate(text, years: LocalDate.queryYears)
    _ = TextRules.trimmingSpaces(text)
    _ = TextRules.firstControlCharacter(in: text)
    _ = TextRules.isColor(text) || TextRules.isTimeOfDay(text) || TextRules.isURLScheme(text) || TextRules.isTimeZoneName(text)
    _ = TextRules.quoted(text)
    _ = JSONText.string(text)
    return 0
}
