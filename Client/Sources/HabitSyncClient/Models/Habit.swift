import Foundation
import HabitSyncDomain

/// A `habits` record (docs/data-model.md).
public struct Habit: DeletableModel {
    public static let collection = SyncCollection.habits

    public enum Kind: String, Codable, Sendable { case formation, breaking }

    public var name: String
    public var habitDescription: String
    public var icon: String
    /// `#RRGGBB` or `#RRGGBBAA`.
    public var color: String?
    public var habitType: Kind
    /// The daily goal; for a breaking habit, the ceiling (below `baselineCount`).
    public var goalCount: Int
    public var goalUnit: String
    public var schedule: HabitSchedule
    /// Required for a breaking habit: where the user started.
    public var baselineCount: Int?
    public var baselineUnit: String?
    public var startDate: LocalDate
    public var endDate: LocalDate?
    /// Nil: the server time of the first write.
    public var createdAt: Date?
    /// The habit's place in the user's list (0 first); nil: the app's own order.
    public var sortOrder: Int?

    public init(
        name: String, habitDescription: String = "", icon: String = "", color: String? = nil, habitType: Kind = .formation,
        goalCount: Int = 1, goalUnit: String = "times", schedule: HabitSchedule = .daily, baselineCount: Int? = nil,
        baselineUnit: String? = nil, startDate: LocalDate, endDate: LocalDate? = nil, createdAt: Date? = nil, sortOrder: Int? = nil
    ) {
        self.name = name
        self.habitDescription = habitDescription
        self.icon = icon
        self.color = color
        self.habitType = habitType
        self.goalCount = goalCount
        self.goalUnit = goalUnit
        self.schedule = schedule
        self.baselineCount = baselineCount
        self.baselineUnit = baselineUnit
        self.startDate = startDate
        self.endDate = endDate
        self.createdAt = createdAt
        self.sortOrder = sortOrder
    }

    private enum CodingKeys: String, CodingKey {
        case name, habitDescription, icon, color, habitType, goalCount, goalUnit, schedule, baselineCount, baselineUnit, startDate, endDate, createdAt, sortOrder
    }

    /// A field the wire lets a device leave out takes the server's default here too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        habitDescription = try container.decodeIfPresent(String.self, forKey: .habitDescription) ?? ""
        icon = try container.decodeIfPresent(String.self, forKey: .icon) ?? ""
        color = try container.decodeIfPresent(String.self, forKey: .color)
        habitType = try container.decode(Kind.self, forKey: .habitType)
        goalCount = try container.decode(Int.self, forKey: .goalCount)
        goalUnit = try container.decode(String.self, forKey: .goalUnit)
        schedule = try container.decode(HabitSchedule.self, forKey: .schedule)
        baselineCount = try container.decodeIfPresent(Int.self, forKey: .baselineCount)
        baselineUnit = try container.decodeIfPresent(String.self, forKey: .baselineUnit)
        startDate = try container.decode(LocalDate.self, forKey: .startDate)
        endDate = try container.decodeIfPresent(LocalDate.self, forKey: .endDate)
        createdAt = try container.decodeIfPresent(Date.self, forKey: .createdAt)
        sortOrder = try container.decodeIfPresent(Int.self, forKey: .sortOrder)
    }
}
