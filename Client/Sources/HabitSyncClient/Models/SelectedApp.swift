import Foundation
import HabitSyncDomain

/// A `selectedApps` record: an app the user chose to guard.
public struct SelectedApp: DeletableModel {
    public static let collection = SyncCollection.selectedApps

    public var appName: String
    public var iconName: String
    /// `scheme://`, e.g. `instagram://`.
    public var urlScheme: String
    public var isInstalled: Bool
    public var dateAdded: Date
    public var orderIndex: Int

    public init(appName: String, iconName: String, urlScheme: String, isInstalled: Bool = true, dateAdded: Date, orderIndex: Int) {
        self.appName = appName
        self.iconName = iconName
        self.urlScheme = urlScheme
        self.isInstalled = isInstalled
        self.dateAdded = dateAdded
        self.orderIndex = orderIndex
    }

    private enum CodingKeys: String, CodingKey { case appName, iconName, urlScheme, isInstalled, dateAdded, orderIndex }

    /// A field the wire lets a device leave out takes the server's default here too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        appName = try container.decode(String.self, forKey: .appName)
        iconName = try container.decode(String.self, forKey: .iconName)
        urlScheme = try container.decode(String.self, forKey: .urlScheme)
        isInstalled = try container.decodeIfPresent(Bool.self, forKey: .isInstalled) ?? true
        dateAdded = try container.decode(Date.self, forKey: .dateAdded)
        orderIndex = try container.decode(Int.self, forKey: .orderIndex)
    }
}
