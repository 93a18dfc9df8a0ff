import Foundation

/// What importing one legacy export file will write, computed without I/O: every habit
/// mapped to the new records (validated by the same rules as a push), or the first error,
/// naming the habit, the field and the text.
public struct LegacyImportPlan: Sendable {
    public struct Habit: Sendable {
        public let id: UUID
        public let name: String
        public let position: Int
        /// The original habit object, archived with the import.
        public let source: JSONValue
        public let record: HabitRecord
        public let reminders: [(id: UUID, record: ReminderRecord)]
        public let days: [DailyProgressRecord]
    }

    public private(set) var habits: [Habit]
    public let timeZone: String
    public let dateEncoding: String
    public var warnings: [String]
    /// Days where the stale `completionStatus` disagrees with the recomputed completion.
    public var statusMismatches: [String]

    public var dayCount: Int { habits.reduce(0) { $0 + $1.days.count } }

    static let skipReasons: [String: String] = [
        "rest day": "rest", "medical/health": "medical", "travel": "travel", "equipment unavailable": "equipment",
        "weather": "weather", "emergency": "emergency", "other": "other", "rest": "rest", "medical": "medical", "equipment": "equipment",
    ]

    /// - Parameter timeZone: required for a bare habit array or a habits.json container;
    ///   overrides nothing when the envelope names its own.
    /// - Parameter context: the clock and the time zones the database knows; records are
    ///   validated by the same rules as a push.
    public static func make(from data: Data, timeZone override: String? = nil, context: ValidationContext) throws(LegacyImportError) -> LegacyImportPlan {
        let root: JSONValue
        do { root = try JSONParser.parse(data, limits: .administrativeFile) } catch { throw LegacyImportError(nil, nil, "the file is not JSON") }
        var habitsValue: JSONValue
        var zoneName = override
        var declaredEncoding: String?
        switch root {
        case .object(let envelope) where envelope["format"] != nil:
            guard envelope["format"] == .string("habitto.legacy-habits") else { throw LegacyImportError(nil, "format", "unknown format") }
            guard envelope["formatVersion"] == .number(1) else { throw LegacyImportError(nil, "formatVersion", "only formatVersion 1 is understood") }
            guard case .string(let zone)? = envelope["userTimeZone"] else { throw LegacyImportError(nil, "userTimeZone", "userTimeZone is required") }
            zoneName = zone
            if case .object(let source)? = envelope["source"], case .string(let encoding)? = source["dateEncoding"] { declaredEncoding = encoding }
            habitsValue = envelope["habits"] ?? .null
        case .object(let container) where container["habits"] != nil:
            habitsValue = container["habits"] ?? .null
        case .array:
            habitsValue = root
        default:
            throw LegacyImportError(nil, nil, "expected an export envelope, a habit array or a habits.json container")
        }
        guard let zoneName, context.timeZones.contains(zoneName), let zone = TimeZone(identifier: zoneName) else {
            throw LegacyImportError(nil, "userTimeZone", "a valid IANA time zone is required (the envelope's userTimeZone, or --time-zone)")
        }
        guard case .array(let items) = habitsValue else { throw LegacyImportError(nil, "habits", "habits must be an array") }
        let encoding = declaredEncoding ?? Self.inferEncoding(items)
        guard encoding == "deferredToDate" || encoding == "iso8601" else { throw LegacyImportError(nil, "dateEncoding", "dateEncoding must be deferredToDate or iso8601") }

        var plan = LegacyImportPlan(habits: [], timeZone: zoneName, dateEncoding: encoding, warnings: [], statusMismatches: [])
        for (position, item) in items.enumerated() {
            plan.habits.append(try plan.mapHabit(item, position: position, zone: zone, context: context))
        }
        return plan
    }

    /// A JSON number as an Int when it is one that fits a record's integer (|n| < 2^31); nil
    /// otherwise, so that `1e308` is an error the rules report rather than a trap.
    static func wholeNumber(_ value: Double) -> Int? {
        guard value.isFinite, value.rounded() == value, abs(value) <= 2_147_483_647 else { return nil }
        return Int(value)
    }

    static func inferEncoding(_ items: [JSONValue]) -> String {
        for item in items {
            if case .object(let habit) = item {
                switch habit["startDate"] {
                case .number?: return "deferredToDate"
                case .string?: return "iso8601"
                default: continue
                }
            }
        }
        return "iso8601"
    }

    // MARK: - One habit

    private mutating func mapHabit(_ item: JSONValue, position: Int, zone: TimeZone, context: ValidationContext) throws(LegacyImportError) -> Habit {
        guard case .object(let h) = item else { throw LegacyImportError("habits[\(position)]", nil, "not an object") }
        let name: String = if case .string(let text)? = h["name"] { text } else { "habits[\(position)]" }
        func fail(_ field: String, _ message: String) -> LegacyImportError { LegacyImportError(name, field, message) }
        guard case .string(let idText)? = h["id"], let id = UUID(uuidString: idText) else { throw fail("id", "id must be a UUID") }
        func date(_ field: String, _ value: JSONValue?) throws(LegacyImportError) -> Date? {
            switch value {
            case nil, .null?: return nil
            case .number(let seconds)?:
                guard dateEncoding == "deferredToDate" else { throw fail(field, "the file mixes date encodings: a number in an \(dateEncoding) file") }
                // Years 1970–9999, as every date of a record (LocalDate.recordYears).
                guard seconds.isFinite, (-978_307_200...253_202_544_000).contains(seconds) else { throw fail(field, "\(seconds) is not a date in years 1970–9999") }
                return Date(timeIntervalSinceReferenceDate: seconds)
            case .string(let text)?:
                guard dateEncoding == "iso8601" else { throw fail(field, "the file mixes date encodings: a string in a \(dateEncoding) file") }
                guard let parsed = WireTime.parse(text, years: LocalDate.recordYears) else { throw fail(field, "'\(TextRules.quoted(text))' is not an ISO-8601 date in years 1970–9999") }
                return parsed
            default:
                throw fail(field, "not a date")
            }
        }
        func dayKeys<T>(_ field: String, _ read: (JSONValue) -> T?) throws(LegacyImportError) -> [LocalDate: T] {
            guard case .object(let map)? = h[field] else { return [:] }
            var result: [LocalDate: T] = [:]
            for (key, value) in map {
                guard let day = LocalDate(key) else { throw fail("\(field)[\(key)]", "'\(key)' is not a real calendar date") }
                guard let parsed = read(value) else { throw fail("\(field)[\(key)]", "unexpected value \(value.jsonText)") }
                result[day] = parsed
            }
            return result
        }

        let breaking: Bool
        switch h["habitType"] {
        case .string("Habit Building")?: breaking = false
        case .string("Habit Breaking")?: breaking = true
        default: throw fail("habitType", "must be Habit Building or Habit Breaking")
        }
        guard case .string(let goalText)? = h["goal"] else { throw fail("goal", "goal is required") }
        guard let goal = LegacyGoal.parse(goalText) else { throw fail("goal", "cannot read goal '\(goalText)'") }
        guard case .string(let scheduleText)? = h["schedule"] else { throw fail("schedule", "schedule is required") }
        var schedule: HabitSchedule
        switch LegacySchedule.parse(scheduleText) {
        case .schedule(let parsed)?: schedule = parsed
        case .unknown?:
            guard let frequency = goal.frequency, case .schedule(let fromGoal)? = LegacySchedule.parse(frequency) else {
                throw fail("schedule", "cannot read schedule '\(scheduleText)', and the goal '\(goalText)' names no frequency")
            }
            schedule = fromGoal
        case nil:
            throw fail("schedule", "cannot read schedule '\(scheduleText)'")
        }
        guard let startInstant = try date("startDate", h["startDate"]) else { throw fail("startDate", "startDate is required") }
        let startDate = LocalDate(startInstant, in: zone)
        let endDate = try date("endDate", h["endDate"]).map { LocalDate($0, in: zone) }
        let createdAt = try date("createdAt", h["createdAt"])
        let baseline: Int? = if case .number(let n)? = h["baseline"] { Self.wholeNumber(n) } else { nil }
        let target: Int? = if case .number(let n)? = h["target"] { Self.wholeNumber(n) } else { nil }
        let habitGoal = if breaking, let target, target > 0 { target } else { goal.count }

        var fields: [String: JSONValue] = [
            "name": .string(name), "habitType": .string(breaking ? "breaking" : "formation"), "goalCount": .number(Double(habitGoal)),
            "goalUnit": .string(goal.unit), "schedule": Self.scheduleJSON(schedule), "startDate": .string(startDate.description),
        ]
        if case .string(let description)? = h["description"] { fields["habitDescription"] = .string(description) }
        if case .string(let icon)? = h["icon"] { fields["icon"] = .string(icon) }
        if let colour = h["color"], colour != .null {
            guard let hex = LegacyColor.hex(colour) else { throw fail("color", "cannot read colour \(colour.jsonText)") }
            fields["color"] = .string(hex)
        }
        if breaking { fields["baselineCount"] = .number(Double(baseline ?? 0)) }
        if let endDate { fields["endDate"] = .string(endDate.description) }
        if let createdAt { fields["createdAt"] = .string(WireTime.format(createdAt)) }
        let record: HabitRecord
        do { record = try HabitRecord(fields, context: context) } catch {
            throw fail(error.field ?? "goal", "\(error.message) (from goal '\(goalText)'\(breaking ? ", target \(target ?? 0), baseline \(baseline ?? 0)" : ""))")
        }

        // Reminders: only the hour and minute in the user's zone mean something.
        var reminders: [(UUID, ReminderRecord)] = []
        if case .array(let items)? = h["reminders"] {
            for (index, item) in items.enumerated() {
                guard case .object(let r) = item, case .string(let rid)? = r["id"], let reminderID = UUID(uuidString: rid),
                    let time = try date("reminders[\(index)].time", r["time"])
                else { throw fail("reminders[\(index)]", "needs id and time") }
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = zone
                let parts = calendar.dateComponents([.hour, .minute], from: time)
                let active: Bool = if case .bool(let flag)? = r["isActive"] { flag } else { true }
                let reminder = try? ReminderRecord(
                    ["habitId": .string(id.uuidString), "time": .string(String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)), "isActive": .bool(active)], context: context)
                if let reminder { reminders.append((reminderID, reminder)) }
            }
        }

        // Days: every key of every per-day map gets a row; a 0/false/[] entry is a real day.
        let completions = try dayKeys("completionHistory") { if case .number(let n) = $0 { Self.wholeNumber(n) } else { nil } }
        let usage = try dayKeys("actualUsage") { if case .number(let n) = $0 { Self.wholeNumber(n) } else { nil } }
        let difficulties = try dayKeys("difficultyHistory") { if case .number(let n) = $0 { Self.wholeNumber(n) } else { nil } }
        let statuses = try dayKeys("completionStatus") { if case .bool(let b) = $0 { b } else { nil } }
        let timestamps = try dayKeys("completionTimestamps") { value -> [JSONValue]? in if case .array(let a) = value { a } else { nil } }
        let goalHistory = try dayKeys("goalHistory") { if case .string(let s) = $0 { s } else { nil } }
        let skips = try dayKeys("skippedDays") { value -> (String, String?)? in
            guard case .object(let skip) = value, case .string(let reason)? = skip["reason"] else { return nil }
            let note: String? = if case .string(let n)? = skip["customNote"] { n } else { nil }
            return (reason, note)
        }
        var goalByDate: [(LocalDate, Int)] = []
        for (day, text) in goalHistory {
            guard let parsed = LegacyGoal.parse(text) else { throw fail("goalHistory[\(day)]", "cannot read goal '\(text)'") }
            goalByDate.append((day, parsed.count))
        }
        goalByDate.sort { $0.0 < $1.0 }
        let allDays = Set(completions.keys).union(usage.keys).union(difficulties.keys).union(timestamps.keys).union(skips.keys).sorted()
        var days: [DailyProgressRecord] = []
        for day in allDays {
            let dayGoal = goalByDate.last(where: { $0.0 <= day })?.1 ?? habitGoal
            let progress = (breaking ? usage[day] : completions[day]) ?? 0
            var progressFields: [String: JSONValue] = [
                "habitId": .string(id.uuidString), "date": .string(day.description), "progressCount": .number(Double(progress)),
                "goalCount": .number(Double(dayGoal)),
            ]
            var stamps: [JSONValue] = []
            for stamp in timestamps[day] ?? [] {
                guard let instant = try date("completionTimestamps[\(day)]", stamp) else { continue }
                stamps.append(.string(WireTime.format(instant)))
            }
            progressFields["timestamps"] = .array(stamps)
            if let difficulty = difficulties[day] {
                if (1...5).contains(difficulty) {
                    progressFields["difficulty"] = .number(Double(difficulty))
                } else {
                    warnings.append("\(name): difficulty \(difficulty) on \(day) is outside 1–5 and was dropped")
                }
            }
            if let (reason, note) = skips[day] {
                guard let mapped = Self.skipReasons[reason.lowercased()] else { throw fail("skippedDays[\(day)].reason", "unknown skip reason '\(reason)'") }
                progressFields["skipReason"] = .string(mapped)
                if let note, !note.isEmpty { progressFields["skipNote"] = .string(String(note.prefix(500))) }
            }
            let record: DailyProgressRecord
            do { record = try DailyProgressRecord(progressFields, context: context) } catch { throw fail(error.field.map { "day \(day) \($0)" } ?? "day \(day)", error.message) }
            let complete = record.skipReason == nil && (breaking ? progress <= dayGoal : progress >= dayGoal)
            if let stated = statuses[day], stated != complete {
                statusMismatches.append("\(name) \(day): completionStatus says \(stated), recomputed \(complete)")
            }
            days.append(record)
        }
        return Habit(id: id, name: name, position: position, source: item, record: record, reminders: reminders, days: days)
    }

    static func scheduleJSON(_ schedule: HabitSchedule) -> JSONValue {
        var fields: [String: JSONValue] = ["type": .string(schedule.type)]
        if let n = schedule.n { fields["n"] = .number(Double(n)) }
        if let days = schedule.weekdays { fields["weekdays"] = .array(days.map { .string($0.rawValue) }) }
        return .object(fields)
    }
}

/// Why a legacy file cannot be imported: which habit, which field, what.
public struct LegacyImportError: Error, Sendable, CustomStringConvertible, Equatable {
    public let habit: String?
    public let field: String?
    public let message: String

    public init(_ habit: String?, _ field: String?, _ message: String) {
        self.habit = habit
        self.field = field
        self.message = message
    }

    public var description: String {
        [habit.map { "habit '\($0)'" }, field.map { "field \($0)" }].compactMap { $0 }.joined(separator: ", ") + (habit == nil && field == nil ? "" : ": ") + message
    }
}
