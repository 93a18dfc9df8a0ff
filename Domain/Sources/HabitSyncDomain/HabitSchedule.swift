/// When a habit is due: a tagged object on the wire (`{"type":"everyNDays","n":2}`).
public enum HabitSchedule: Sendable, Equatable {
    case daily
    case everyNDays(Int)
    case specificWeekdays([Weekday])
    case frequencyWeekly(Int)
    case frequencyMonthly(Int)

    public var type: String {
        switch self {
        case .daily: "daily"
        case .everyNDays: "everyNDays"
        case .specificWeekdays: "specificWeekdays"
        case .frequencyWeekly: "frequencyWeekly"
        case .frequencyMonthly: "frequencyMonthly"
        }
    }

    public var n: Int? {
        switch self {
        case .everyNDays(let n), .frequencyWeekly(let n), .frequencyMonthly(let n): n
        case .daily, .specificWeekdays: nil
        }
    }

    public var weekdays: [Weekday]? {
        if case .specificWeekdays(let days) = self { return days }
        return nil
    }

    static func read(_ fields: [String: JSONValue], context: ValidationContext) throws(ChangeRejection) -> HabitSchedule {
        var reader = FieldReader(fields, context: context, prefix: "schedule.")
        let type = try reader.required("type", try reader.oneOf("type", ["daily", "everyNDays", "specificWeekdays", "frequencyWeekly", "frequencyMonthly"]))
        let schedule: HabitSchedule
        switch type {
        case "daily":
            schedule = .daily
        case "everyNDays":
            // n ≥ 1: everyNDays(0) divides by zero in the seed (erratum 6).
            schedule = .everyNDays(try reader.required("n", try reader.integer("n", range: 1...Int.max)))
        case "specificWeekdays":
            let items = try reader.required("weekdays", try reader.array("weekdays", maxCount: 7))
            guard !items.isEmpty else { throw reader.fail("weekdays", "must name at least one weekday") }
            var days: [Weekday] = []
            for (index, item) in items.enumerated() {
                guard case .string(let name) = item, let day = Weekday(rawValue: name) else {
                    throw reader.element("weekdays", index, "must be one of sunday, monday, tuesday, wednesday, thursday, friday, saturday")
                }
                guard !days.contains(day) else { throw reader.element("weekdays", index, "repeats \(name)") }
                days.append(day)
            }
            schedule = .specificWeekdays(days)
        case "frequencyWeekly":
            schedule = .frequencyWeekly(try reader.required("n", try reader.integer("n", range: 1...7)))
        default:
            schedule = .frequencyMonthly(try reader.required("n", try reader.integer("n", range: 1...31)))
        }
        try reader.finish()
        return schedule
    }
}

/// Weekday names, Sunday first; `number` is 1…7 as Calendar and seed erratum 1 want it.
public enum Weekday: String, Sendable, CaseIterable {
    case sunday, monday, tuesday, wednesday, thursday, friday, saturday

    // Every case is in allCases.
    public var number: Int { Weekday.allCases.firstIndex(of: self)! + 1 }
}

extension HabitSchedule {
    /// The schedule object as pulls render it: `type`, and `n` or `weekdays` when it has them.
    public var canonical: JSONValue {
        Self.canonical(columns: [.text(type), .integer(n), .texts(weekdays?.map(\.rawValue))])
    }

    /// The schedule object from its three columns' values (`schedule_type`, `schedule_n`,
    /// `schedule_weekdays`), as `habitsync_habit_record_json` renders them: `n` and `weekdays`
    /// only where they are not null. Null for values that are not those columns'.
    public static func canonical(columns: [FieldValue]) -> JSONValue {
        guard columns.count == 3, case .text(let type) = columns[0], case .integer(let n) = columns[1], case .texts(let weekdays) = columns[2]
        else { return .null }
        var schedule: [String: JSONValue] = ["type": type.map { .string($0) } ?? .null]
        if let n { schedule["n"] = .number(Double(n)) }
        if let weekdays { schedule["weekdays"] = .array(weekdays.map { .string($0) }) }
        return .object(schedule)
    }
}
