import HabitSyncDomain
import LibPQClient

// `LocalDate` is PostgreSQL's `date`, sent and read as such: the domain module stays free of
// the client, and the store never passes dates as text it parses itself. Sessions run with
// `DateStyle = ISO, YMD` (`PGConnectionConfiguration`), so the server prints `yyyy-MM-dd`; a
// date outside years 1–9999 (`infinity`, BC) does not decode.
extension LocalDate: PGArrayElement, PGDecodableArrayElement {
    public func pgBind() -> PGBind { PGBind(type: .date, text: description) }
    public static var pgArrayType: PGTypeOID { .dateArray }
    public var pgArrayElementText: String? { description }

    public static func accepts(_ type: PGTypeOID) -> Bool { type == .date }
    public static func acceptsArray(_ type: PGTypeOID) -> Bool { type == .dateArray }
    public init?(pgText text: String, type: PGTypeOID) { self.init(text) }
}
