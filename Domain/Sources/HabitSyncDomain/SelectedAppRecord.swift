import Foundation

/// A `selectedApps` record (seed 002).
public struct SelectedAppRecord: Sendable, Equatable {
    public var appName: String
    public var iconName: String
    public var urlScheme: String
    public var isInstalled: Bool
    public var dateAdded: Date
    public var orderIndex: Int

    public init(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) {
        var reader = FieldReader(fields, context: context)
        appName = try reader.required("appName", try reader.string("appName", length: 1...200, trimmed: true))
        iconName = try reader.required("iconName", try reader.string("iconName", length: 1...200))
        urlScheme = try reader.required("urlScheme", try reader.string("urlScheme", length: 1...500))
        if !TextRules.isURLScheme(urlScheme) {
            throw reader.fail("urlScheme", "must be a URL scheme such as instagram:// (no spaces after it), not '\(TextRules.quoted(urlScheme))'")
        }
        isInstalled = try reader.bool("isInstalled") ?? true
        dateAdded = try reader.required("dateAdded", try reader.timestamp("dateAdded"))
        orderIndex = try reader.required("orderIndex", try reader.integer("orderIndex", range: 0...Int.max))
        try reader.finish()
    }
}

extension SelectedAppRecord {
    public static let fields: [RecordField] = {
        let declare = RecordFieldDeclarer<SelectedAppRecord>(merge: .latestWins) { if case .selectedApp(let s) = $0 { s } else { nil } }
        return [
            declare.field("appName", "app_name", .text) { .text($0.appName) },
            declare.field("iconName", "icon_name", .text) { .text($0.iconName) },
            declare.field("urlScheme", "url_scheme", .text) { .text($0.urlScheme) },
            declare.field("isInstalled", "is_installed", .bool) { .bool($0.isInstalled) },
            declare.field("dateAdded", "date_added", .timestamptz) { .timestamp($0.dateAdded) },
            declare.field("orderIndex", "order_index", .int4) { .integer($0.orderIndex) },
        ]
    }()
}
