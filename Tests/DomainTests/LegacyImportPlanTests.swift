import Foundation
import HabitSyncDomain
import Testing

@Suite struct LegacyImportPlanTests {
    /// Two exports in the documented format (docs/legacy-import.md), one per date encoding.
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/legacy")

    static func fixture(_ name: String) throws -> Data { try Data(contentsOf: fixtures.appendingPathComponent(name)) }

    @Test(
        arguments: [
            ("5 times everyday", 5, "times", "everyday"), ("1 time on every 2 days", 1, "times", "every 2 days"),
            ("2 cups on every monday, every friday", 2, "cups", "every monday, every friday"), ("1 time per everyday", 1, "times", "everyday"),
            ("30 minutes", 30, "minutes", nil), ("  10 Pages Daily ", 10, "pages", "daily"), ("read", 1, "read", nil),
            ("3 glasses a day", 3, "glasses", "a day"), ("2 times twice a week", 2, "times", "twice a week"),
            ("20 minutes every monday and friday", 20, "minutes", "every monday and friday"),
        ] as [(String, Int, String, String?)])
    func goalGrammar(_ text: String, _ count: Int, _ unit: String, _ frequency: String?) throws {
        let goal = try #require(LegacyGoal.parse(text))
        #expect(goal.count == count)
        #expect(goal.unit == unit)
        #expect(goal.frequency == frequency)
    }

    @Test(arguments: [
        ("Everyday", HabitSchedule.daily), ("every day", .daily), ("Daily", .daily), ("every 3 days", .everyNDays(3)), ("Every 1 day", .everyNDays(1)),
        ("Every Monday, Every Friday", .specificWeekdays([.monday, .friday])), ("mon, wed, fri", .specificWeekdays([.monday, .wednesday, .friday])),
        ("Weekdays", .specificWeekdays([.monday, .tuesday, .wednesday, .thursday, .friday])), ("weekends", .specificWeekdays([.saturday, .sunday])),
        ("once a week", .frequencyWeekly(1)), ("twice a week", .frequencyWeekly(2)), ("3 days a week", .frequencyWeekly(3)),
        ("2 times per week", .frequencyWeekly(2)), ("7 days a week", .daily), ("once a month", .frequencyMonthly(1)),
        ("twice a month", .frequencyMonthly(2)), ("5 days a month", .frequencyMonthly(5)),
    ])
    func scheduleGrammar(_ text: String, _ schedule: HabitSchedule) {
        #expect(LegacySchedule.parse(text) == .schedule(schedule))
    }

    @Test func unknownSchedulesDeferToTheGoalAndGarbageIsAnError() {
        #expect(LegacySchedule.parse("Select days") == .unknown)
        #expect(LegacySchedule.parse("not selected") == .unknown)
        #expect(LegacySchedule.parse("") == .unknown)
        #expect(LegacySchedule.parse("whenever I feel like it") == nil)
        #expect(LegacySchedule.parse("every 0 days") == nil)
        #expect(LegacySchedule.parse("monthly-ish") == nil)
    }

    @Test func coloursBecomeHex() {
        #expect(LegacyColor.hex(.object(["red": .number(1), "green": .number(0.5), "blue": .number(0), "alpha": .number(1)])) == "#FF8000FF")
        #expect(LegacyColor.hex(.object(["red": .number(-1), "green": .number(0), "blue": .number(0), "alpha": .number(1)])) == LegacyColor.navy)
        #expect(LegacyColor.hex(.string("FF8800")) == "#FF8800FF")
        #expect(LegacyColor.hex(.string("#abc")) == "#AABBCCFF")
        #expect(LegacyColor.hex(.string("#11223344")) == "#11223344")
        #expect(LegacyColor.hex(.string("zzz")) == nil)
    }

    @Test func theFormationFixtureMapsNumericDatesGoalHistorySkipsAndDifficulty() throws {
        let plan = try LegacyImportPlan.make(from: try Self.fixture("formation-numeric-dates.json"), context: .standalone())
        #expect(plan.dateEncoding == "deferredToDate")
        #expect(plan.timeZone == "Europe/Lisbon")
        let habit = try #require(plan.habits.first)
        #expect(habit.record.habitType == "formation")
        #expect(habit.record.goalCount == 2)
        #expect(habit.record.goalUnit == "times")
        #expect(habit.record.schedule == .daily)
        #expect(habit.record.startDate == LocalDate("2026-04-01"), "23:00Z is the next day in Lisbon in summer time")
        #expect(habit.record.color == "#4CAF50FF")
        let byDate = Dictionary(uniqueKeysWithValues: habit.days.map { ($0.date.description, $0) })
        #expect(habit.days.count == 10, "nine days of history and one skipped day")
        #expect(byDate["2026-04-01"]?.goalCount == 1, "goal history: 1 time until 04-04")
        #expect(byDate["2026-04-04"]?.goalCount == 2)
        #expect(byDate["2026-04-03"]?.progressCount == 0, "a 0 entry is a real day")
        #expect(byDate["2026-04-07"]?.skipReason == "weather")
        #expect(byDate["2026-04-07"]?.skipNote == "Storm warning all evening")
        #expect(habit.reminders.first?.record.time == "19:30")
        #expect(habit.reminders.count == 1)
        #expect(habit.days.allSatisfy { $0.difficulty.map { (1...5).contains($0) } ?? true })
    }

    @Test func theBreakingFixtureMapsISODatesUsageAndItsCeiling() throws {
        let plan = try LegacyImportPlan.make(from: try Self.fixture("breaking-iso-dates.json"), context: .standalone())
        #expect(plan.dateEncoding == "iso8601")
        let habit = try #require(plan.habits.first)
        #expect(habit.record.habitType == "breaking")
        #expect(habit.record.goalCount == 1)
        #expect(habit.record.baselineCount == 3)
        #expect(habit.record.goalUnit == "can")
        #expect(habit.record.schedule == .specificWeekdays([.monday, .tuesday, .wednesday, .thursday, .friday]))
        #expect(habit.record.endDate == LocalDate("2026-06-30"), "15:00Z is the next day in Tokyo")
        #expect(habit.reminders.map(\.record.time) == ["12:00", "22:15"])
        #expect(habit.reminders.map(\.record.isActive) == [true, false])
        #expect(habit.days.contains { $0.progressCount > 0 }, "progress comes from actualUsage")
    }

    static func envelope(_ habit: String, encoding: String = "iso8601") -> Data {
        Data(
            """
            {"format":"habitto.legacy-habits","formatVersion":1,"source":{"dateEncoding":"\(encoding)"},"userTimeZone":"UTC","habits":[\(habit)]}
            """.utf8)
    }

    static func habit(goal: String = "1 time everyday", schedule: String = "Everyday", start: String = "\"2026-03-01T00:00:00Z\"", extra: String = "") -> String {
        """
        {"id":"11111111-2222-3333-4444-555555555555","name":"Read","description":"","icon":"None","color":"FF8800","habitType":"Habit Building",
         "schedule":"\(schedule)","goal":"\(goal)","reminder":"No reminder","startDate":\(start)\(extra)}
        """
    }

    @Test func errorsNameTheHabitTheFieldAndTheText() {
        func error(_ data: Data) -> LegacyImportError? {
            do { _ = try LegacyImportPlan.make(from: data, context: .standalone()); return nil } catch { return error }
        }
        let goal = error(Self.envelope(Self.habit(goal: "lots", schedule: "whenever")))
        #expect(goal?.habit == "Read")
        #expect(goal?.field == "schedule")
        #expect(goal?.description.contains("whenever") == true)
        let empty = error(Self.envelope(Self.habit(goal: "   ")))
        #expect(empty?.habit == "Read")
        #expect(empty?.field == "goal")
        let zero = error(Self.envelope(Self.habit(goal: "0 times everyday")))
        #expect(zero?.field == "goalCount")
        #expect(zero?.description.contains("0 times everyday") == true)
        let mixed = error(Self.envelope(Self.habit(extra: ",\"endDate\":800000000")))
        #expect(mixed?.field == "endDate")
        #expect(mixed?.message.contains("mixes date encodings") == true)
        let badKey = error(Self.envelope(Self.habit(extra: ",\"completionHistory\":{\"2026-02-30\":1}")))
        #expect(badKey?.field == "completionHistory[2026-02-30]")
        #expect(error(Data("[\(Self.habit())]".utf8))?.field == "userTimeZone", "a bare array needs --time-zone")
        #expect((try? LegacyImportPlan.make(from: Data("[\(Self.habit())]".utf8), timeZone: "Asia/Tokyo", context: .standalone())) != nil)
        let unknownSchedule = try? LegacyImportPlan.make(from: Self.envelope(Self.habit(goal: "2 times every 3 days", schedule: "Select days")), context: .standalone())
        #expect(unknownSchedule?.habits.first?.record.schedule == .everyNDays(3), "the goal's frequency fills an unknown schedule")
        let difficulty = try? LegacyImportPlan.make(from: Self.envelope(Self.habit(extra: ",\"difficultyHistory\":{\"2026-03-02\":9}")), context: .standalone())
        #expect(difficulty?.warnings.count == 1)
        #expect(difficulty?.habits.first?.days.first?.difficulty == nil)
    }
}
