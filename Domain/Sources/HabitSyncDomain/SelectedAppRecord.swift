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
