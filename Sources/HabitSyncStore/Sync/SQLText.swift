import Foundation
import HabitSyncDomain
import LibPQClient

/// Values as PostgreSQL text, for batches bound as `text[]` columns and cast in SQL
/// (`unnest($3::text[])` … `i.goal_count::int4`): one array type for every column keeps the
/// set-based statements uniform.
enum SQLText {
    static func int(_ value: Int?) -> String? { value.map { String($0) } }
    static func double(_ value: Double?) -> String? { value.map { "\($0)" } }
    static func bool(_ value: Bool?) -> String? { value.map { $0 ? "t" : "f" } }
    static func date(_ value: LocalDate?) -> String? { value?.description }
    static func timestamp(_ value: Date?) -> String? { value.map(WireTime.format) }
    static func uuid(_ value: UUID?) -> String? { value?.uuidString.lowercased() }

    /// A declared field value (`FieldValue`) as its column's text.
    static func of(_ value: FieldValue) -> String? {
        switch value {
        case .text(let text): text
        case .integer(let number): int(number)
        case .number(let number): double(number)
        case .bool(let flag): bool(flag)
        case .uuid(let id): uuid(id)
        case .date(let day): date(day)
        case .timestamp(let time): timestamp(time)
        case .texts(let texts): array(texts)
        case .timestamps(let times): array(times?.map(WireTime.format))
        }
    }

    /// A one-dimensional array literal, `{"a","b"}`.
    static func array(_ values: [String]?) -> String? {
        guard let values else { return nil }
        return "{" + values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
    }
}
