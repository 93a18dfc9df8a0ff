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
        self = Self.unread
        try Self.declared.read(into: &self, &reader)
        try reader.finish()
    }

    /// What reading starts from; every required field is read over it or the read fails.
    private static let unread = SelectedAppRecord(appName: "", iconName: "", urlScheme: "", isInstalled: true, dateAdded: Date(timeIntervalSince1970: 0), orderIndex: 0)

    private init(appName: String, iconName: String, urlScheme: String, isInstalled: Bool, dateAdded: Date, orderIndex: Int) {
        self.appName = appName
        self.iconName = iconName
        self.urlScheme = urlScheme
        self.isInstalled = isInstalled
        self.dateAdded = dateAdded
        self.orderIndex = orderIndex
    }
}

extension SelectedAppRecord {
    public static let fields = declared.map(\.erased)

    static let declared: [DeclaredField<SelectedAppRecord>] = {
        let declare = RecordFieldDeclarer<SelectedAppRecord>(merge: .latestWins) { if case .selectedApp(let s) = $0 { s } else { nil } }
        return [
            declare.field(
                "appName", "app_name", .text, read: { s, r throws(ChangeRejection) in s.appName = try r.required("appName", try r.string("appName", length: 1...200, trimmed: true)) }
            ) { .text($0.appName) },
            declare.field(
                "iconName", "icon_name", .text, read: { s, r throws(ChangeRejection) in s.iconName = try r.required("iconName", try r.string("iconName", length: 1...200)) }
            ) { .text($0.iconName) },
            declare.field(
                "urlScheme", "url_scheme", .text,
                read: { s, r throws(ChangeRejection) in
                    s.urlScheme = try r.required("urlScheme", try r.string("urlScheme", length: 1...500))
                    if !TextRules.isURLScheme(s.urlScheme) {
                        throw r.fail("urlScheme", "must be a URL scheme such as instagram:// (no spaces after it), not '\(TextRules.quoted(s.urlScheme))'")
                    }
                }
            ) { .text($0.urlScheme) },
            declare.field("isInstalled", "is_installed", .bool, read: { s, r throws(ChangeRejection) in s.isInstalled = try r.bool("isInstalled") ?? true }) {
                .bool($0.isInstalled)
            },
            declare.field(
                "dateAdded", "date_added", .timestamptz, read: { s, r throws(ChangeRejection) in s.dateAdded = try r.required("dateAdded", try r.timestamp("dateAdded")) }
            ) { .timestamp($0.dateAdded) },
            declare.field(
                "orderIndex", "order_index", .int4,
                read: { s, r throws(ChangeRejection) in s.orderIndex = try r.required("orderIndex", try r.integer("orderIndex", range: 0...Int.max)) }
            ) { .integer($0.orderIndex) },
        ]
    }()
}
