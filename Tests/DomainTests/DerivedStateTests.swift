import Foundation
import HabitSyncDomain
import SeededRandom
import Testing

@Suite struct DerivedStateTests {
    static func day(_ text: String) -> LocalDate { LocalDate(text)! }

    static func habit(_ schedule: HabitSchedule = .daily, type: String = "formation", start: String = "2026-11-01", end: String? = nil, deleted: Bool = false) -> HabitDefinition {
        HabitDefinition(id: UUID(), habitType: type, schedule: schedule, startDate: day(start), endDate: end.map(day), deleted: deleted)
    }

    static func done(_ habit: HabitDefinition, _ date: String, count: Int = 1, goal: Int = 1, skipped: Bool = false) -> DayRecord {
        DayRecord(habitID: habit.id, date: day(date), progressCount: count, goalCount: goal, skipped: skipped)
    }

    // MARK: - Calendar

    @Test(arguments: [
        ("2026-11-20", Weekday.friday), ("2024-02-29", .thursday), ("1970-01-01", .thursday), ("2000-01-01", .saturday),
        ("2026-11-22", .sunday), ("1969-12-31", .wednesday), ("2026-03-08", .sunday),
    ])
    func weekdaysOfKnownDates(_ date: String, _ weekday: Weekday) {
        #expect(Self.day(date).weekday == weekday)
    }

    @Test func instantsBecomeTheUsersCalendarDay() {
        let instant = WireTime.parse("2026-11-20T11:30:00Z")!
        #expect(LocalDate(instant, in: TimeZone(identifier: "Pacific/Kiritimati")!) == Self.day("2026-11-21"))  // UTC+14
        #expect(LocalDate(instant, in: TimeZone(identifier: "Pacific/Pago_Pago")!) == Self.day("2026-11-20"))  // UTC−11
        #expect(LocalDate(WireTime.parse("2026-11-20T10:30:00Z")!, in: TimeZone(identifier: "Pacific/Kiritimati")!) == Self.day("2026-11-21"))
        #expect(LocalDate(WireTime.parse("2026-11-20T10:30:00Z")!, in: TimeZone(identifier: "Pacific/Pago_Pago")!) == Self.day("2026-11-19"))
        // Across the DST change in New York (2026-03-08 02:00 → 03:00).
        let newYork = TimeZone(identifier: "America/New_York")!
        #expect(LocalDate(WireTime.parse("2026-03-08T04:59:00Z")!, in: newYork) == Self.day("2026-03-07"))  // 23:59 EST
        #expect(LocalDate(WireTime.parse("2026-03-09T03:59:00Z")!, in: newYork) == Self.day("2026-03-08"))  // 23:59 EDT
        #expect(LocalDate(WireTime.parse("2026-03-09T04:01:00Z")!, in: newYork) == Self.day("2026-03-09"))
    }

    // MARK: - Due

    @Test func dueRulesPerSchedule() {
        let daily = Self.habit()
        #expect(daily.isDue(on: Self.day("2026-11-01")))
        #expect(!daily.isDue(on: Self.day("2026-10-31")), "before its start")
        let ended = Self.habit(end: "2026-11-10")
        #expect(ended.isDue(on: Self.day("2026-11-10")))
        #expect(!ended.isDue(on: Self.day("2026-11-11")), "after its end")
        #expect(!Self.habit(deleted: true).isDue(on: Self.day("2026-11-05")))
        let everyThird = Self.habit(.everyNDays(3))
        #expect((1...10).filter { everyThird.isDue(on: Self.day(String(format: "2026-11-%02d", $0))) } == [1, 4, 7, 10])
        for weekday in Weekday.allCases {
            let habit = Self.habit(.specificWeekdays([weekday]))
            let due = (1...7).filter { habit.isDue(on: Self.day(String(format: "2026-11-%02d", $0))) }
            #expect(due.count == 1 && Self.day(String(format: "2026-11-%02d", due[0])).weekday == weekday, "\(weekday)")
        }
        #expect(!Self.habit(.frequencyWeekly(3)).isDue(on: Self.day("2026-11-05")))
        #expect(!Self.habit(.frequencyMonthly(3)).isDue(on: Self.day("2026-11-05")))
    }

    @Test func breakingHabitsAreCompleteAtOrUnderTheirCeiling() {
        // Seed erratum 2: progressCount >= goalCount for every habit rewarded relapse.
        let habit = Self.habit(type: "breaking")
        #expect(Self.done(habit, "2026-11-01", count: 2, goal: 3).isComplete(habitType: "breaking"))
        #expect(Self.done(habit, "2026-11-01", count: 3, goal: 3).isComplete(habitType: "breaking"))
        #expect(!Self.done(habit, "2026-11-01", count: 4, goal: 3).isComplete(habitType: "breaking"))
        #expect(!Self.done(habit, "2026-11-01", count: 2, goal: 3).isComplete(habitType: "formation"))
    }

    // MARK: - Streaks

    struct StreakCase: Sendable, CustomTestStringConvertible {
        let name: String
        let habits: @Sendable () -> ([HabitDefinition], [DayRecord])
        let today: String
        let current: Int
        let longest: Int
        let total: Int
        var testDescription: String { name }
    }

    static let streakCases: [StreakCase] = [
        StreakCase(
            name: "a missed day with no record breaks (erratum 3)",
            habits: {
                let h = habit()
                return ([h], [done(h, "2026-11-01"), done(h, "2026-11-02"), done(h, "2026-11-04"), done(h, "2026-11-05")])
            }, today: "2026-11-05", current: 2, longest: 2, total: 4),
        StreakCase(
            name: "rest days between complete days do not break (erratum 3)",
            habits: {
                let h = habit(.specificWeekdays([.monday, .wednesday, .friday]), start: "2026-11-02")
                return ([h], [done(h, "2026-11-02"), done(h, "2026-11-04"), done(h, "2026-11-06")])
            }, today: "2026-11-08", current: 3, longest: 3, total: 3),
        StreakCase(
            name: "today incomplete does not break yet",
            habits: {
                let h = habit()
                return ([h], [done(h, "2026-11-01"), done(h, "2026-11-02")])
            }, today: "2026-11-03", current: 2, longest: 2, total: 2),
        StreakCase(
            name: "yesterday incomplete breaks",
            habits: {
                let h = habit()
                return ([h], [done(h, "2026-11-01"), done(h, "2026-11-02")])
            }, today: "2026-11-04", current: 0, longest: 2, total: 2),
        StreakCase(
            name: "everyNDays counts only its due days",
            habits: {
                let h = habit(.everyNDays(2))
                return ([h], [done(h, "2026-11-01"), done(h, "2026-11-03"), done(h, "2026-11-05")])
            }, today: "2026-11-06", current: 3, longest: 3, total: 3),
        StreakCase(
            name: "frequency habits count where completed, and nothing due is rest",
            habits: {
                let h = habit(.frequencyWeekly(3))
                return ([h], [done(h, "2026-11-01"), done(h, "2026-11-04")])
            }, today: "2026-11-06", current: 2, longest: 2, total: 2),
        StreakCase(
            name: "all due fixed habits must be complete",
            habits: {
                let a = habit(), b = habit()
                return ([a, b], [done(a, "2026-11-01"), done(b, "2026-11-01"), done(a, "2026-11-02")])
            }, today: "2026-11-03", current: 0, longest: 1, total: 1),
        StreakCase(
            name: "a skip is neutral",
            habits: {
                let h = habit()
                return ([h], [done(h, "2026-11-01"), done(h, "2026-11-02", skipped: true), done(h, "2026-11-03")])
            }, today: "2026-11-03", current: 2, longest: 2, total: 2),
        StreakCase(
            name: "breaking habits over their ceiling break",
            habits: {
                let h = habit(type: "breaking")
                return ([h], [done(h, "2026-11-01", count: 1, goal: 2), done(h, "2026-11-02", count: 5, goal: 2), done(h, "2026-11-03", count: 0, goal: 2)])
            }, today: "2026-11-03", current: 1, longest: 1, total: 2),
        StreakCase(
            name: "a habit that ended stops being due",
            habits: {
                let h = habit(end: "2026-11-02")
                return ([h], [done(h, "2026-11-01"), done(h, "2026-11-02")])
            }, today: "2026-11-06", current: 2, longest: 2, total: 2),
        StreakCase(
            name: "progress outside the habit's range never counts",
            habits: {
                let h = habit(start: "2026-11-03")
                return ([h], [done(h, "2026-11-01"), done(h, "2026-11-02"), done(h, "2026-11-03")])
            }, today: "2026-11-03", current: 1, longest: 1, total: 1),
        StreakCase(
            name: "deleted habits do not count",
            habits: {
                let h = habit(deleted: true)
                return ([h], [done(h, "2026-11-01")])
            }, today: "2026-11-03", current: 0, longest: 0, total: 0),
    ]

    @Test(arguments: streakCases)
    func streaks(_ testCase: StreakCase) {
        let (habits, records) = testCase.habits()
        let streak = GlobalStreak.compute(DayClassifier(habits: habits, records: records), today: Self.day(testCase.today))
        #expect(streak.currentStreak == testCase.current)
        #expect(streak.longestStreak == testCase.longest)
        #expect(streak.totalCompleteDays == testCase.total)
        #expect(streak.currentStreak == 0 || streak.lastCompleteDate != nil)
    }

    @Test(arguments: Weekday.allCases)
    func weekdaySchedulesOnEveryWeekday(_ weekday: Weekday) {
        let h = Self.habit(.specificWeekdays([weekday]), start: "2026-10-01")
        // Complete the habit on each of its days in October and November up to the 28th.
        let days = (0..<59).map { Self.day("2026-10-01").adding(days: $0) }.filter { $0.weekday == weekday }
        let records = days.map { DayRecord(habitID: h.id, date: $0, progressCount: 1, goalCount: 1) }
        let streak = GlobalStreak.compute(DayClassifier(habits: [h], records: records), today: Self.day("2026-11-28"))
        #expect(streak.currentStreak == days.count)
        #expect(streak.totalCompleteDays == days.count)
    }

    @Test func theUsersTimeZoneDecidesWhichDayIsToday() {
        // One history of calendar days; the same instant is a different "today" far east and far west.
        let h = Self.habit(start: "2026-11-10")
        let records = (10...19).map { Self.done(h, String(format: "2026-11-%02d", $0)) }
        let classifier = DayClassifier(habits: [h], records: records)
        let instant = WireTime.parse("2026-11-20T11:30:00Z")!
        let east = LocalDate(instant, in: TimeZone(identifier: "Pacific/Kiritimati")!)  // UTC+14: already the 21st
        let west = LocalDate(instant, in: TimeZone(identifier: "Pacific/Pago_Pago")!)  // UTC−11: still the 20th
        #expect(east == Self.day("2026-11-21"))
        #expect(west == Self.day("2026-11-20"))
        // West: today (20th) pending, run of 10 intact. East: the 20th is a missed past day.
        #expect(GlobalStreak.compute(classifier, today: west).currentStreak == 10)
        #expect(GlobalStreak.compute(classifier, today: east).currentStreak == 0)
        #expect(GlobalStreak.compute(classifier, today: east).longestStreak == 10)
    }

    @Test func aStreakRunsAcrossADaylightSavingChange() {
        // New York springs forward on 2026-03-08 (a 23-hour day); calendar days still count one each.
        let newYork = TimeZone(identifier: "America/New_York")!
        let h = Self.habit(start: "2026-03-06")
        let completions = ["2026-03-06T23:30:00-05:00", "2026-03-07T23:30:00-05:00", "2026-03-08T23:30:00-04:00", "2026-03-09T23:30:00-04:00"]
        let records = completions.map { DayRecord(habitID: h.id, date: LocalDate(WireTime.parse($0)!, in: newYork), progressCount: 1, goalCount: 1) }
        #expect(records.map(\.date.description) == ["2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09"])
        let today = LocalDate(WireTime.parse("2026-03-10T03:30:00Z")!, in: newYork)  // 23:30 EDT on the 9th
        let streak = GlobalStreak.compute(DayClassifier(habits: [h], records: records), today: today)
        #expect(streak.currentStreak == 4)
    }

    @Test func anAncientStartDateCostsAtMostTenYearsOfDays() {
        let h = Self.habit(start: "0001-01-01")
        let days = DayClassifier(habits: [h], records: [Self.done(h, "2026-11-19")]).classifyAll(through: Self.day("2026-11-20"))
        #expect(days.count == DayClassifier.historyDays + 1)
        #expect(GlobalStreak.compute(DayClassifier(habits: [h], records: [Self.done(h, "2026-11-19")]), today: Self.day("2026-11-20")).currentStreak == 1)
    }

    // MARK: - XP and levels

    @Test(arguments: [(0, 1, 0, 300), (299, 1, 299, 300), (300, 2, 0, 900), (1199, 2, 899, 900), (1200, 3, 0, 1500), (2700, 4, 0, 2100), (-500, 1, 0, 300)])
    func levelsFromTheLedger(_ sum: Int, _ level: Int, _ inLevel: Int, _ span: Int) {
        // Erratum 4: below 300 XP the seed said level 0. Erratum 5: negative sums clamp at 0.
        let progress = UserProgress(ledgerSum: sum)
        #expect(progress.currentLevel == level)
        #expect(progress.xpForCurrentLevel == inLevel)
        #expect(progress.xpForNextLevel == span)
        #expect(progress.totalXP == max(0, sum))
    }

    @Test func dailyCompletionXPAwardsOnceReversesAnUndoAndAwardsAgain() {
        let today = Self.day("2026-11-20")
        var ledger: [LocalDate: Int] = [:]
        func apply(_ complete: Set<LocalDate>) -> [DailyCompletionXP.Correction] {
            let corrections = DailyCompletionXP.corrections(completeDays: complete, netAwards: ledger, setting: 50)
            for correction in corrections { ledger[correction.date, default: 0] += correction.amount }
            return corrections
        }
        #expect(apply([today]) == [.init(date: today, amount: 50)])
        #expect(apply([today]).isEmpty, "a second device completing the same day awards nothing more")
        let undo = apply([])
        #expect(undo == [.init(date: today, amount: -50)])
        #expect(undo.first?.reason == DailyCompletionXP.reversalReason)
        #expect(apply([today]) == [.init(date: today, amount: 50)])
        #expect(DailyCompletionXP.corrections(completeDays: [today], netAwards: ledger, setting: 0) == [.init(date: today, amount: -50)], "setting 0 takes awards back")
    }

    // MARK: - Statistics

    @Test func forestStatsCountCompletedAgainstFinishedSessions() {
        let utc = TimeZone(identifier: "UTC")!
        func session(_ state: String, _ end: String?, _ duration: Double = 1500) -> FocusSessionRecord {
            FocusSessionRecord(startTime: WireTime.parse("2026-11-01T00:00:00Z")!, endTime: end.flatMap { WireTime.parse($0) }, state: state, duration: duration, pausedDuration: 0, createdAt: Date())
        }
        let stats = ForestStats.compute(
            [
                session("completed", "2026-11-18T10:00:00Z"), session("completed", "2026-11-19T10:00:00Z"), session("completed", "2026-11-20T10:00:00Z", 600),
                session("abandoned", "2026-11-20T11:00:00Z", 100), session("active", nil, 50),
            ], today: Self.day("2026-11-20"), timeZone: utc)
        #expect(stats.totalTrees == 3)
        #expect(stats.totalFocusTime == 3600)
        #expect(stats.todaysTrees == 1)
        #expect(stats.todaysFocusTime == 600)
        #expect(stats.currentStreak == 3)
        #expect(stats.abandonedCount == 1)
        // Erratum 7: 3 / (3 + 1), the running session left out.
        #expect(stats.completionRate == 75)
    }

    @Test func usageStatisticsAndTheUsageStreak() {
        let utc = TimeZone(identifier: "UTC")!
        func event(_ type: String, _ at: String, pause: Double) -> UsageEventRecord {
            try! UsageEventRecord(
                [
                    "eventType": .string(type), "timestamp": .string(at), "pauseDuration": .number(pause), "timerDuration": .number(3600),
                    "targetAppName": .string("App"),
                ], context: .standalone())
        }
        let events = [
            event("exit_to_focus", "2026-11-19T08:00:00Z", pause: 1800), event("exit_to_focus", "2026-11-18T08:00:00Z", pause: 1800),
            event("proceed_to_app", "2026-11-19T09:00:00Z", pause: 0), event("deepen_pause", "2026-11-19T09:05:00Z", pause: 30),
        ]
        let stats = UsageStatistics.compute(events, today: Self.day("2026-11-20"), timeZone: utc)
        #expect(stats.hoursReclaimed == 1)
        #expect(stats.totalConsciousExits == 2)
        #expect(stats.averagePauseTime == 907.5)
        #expect(stats.intentionalityScore == 0.5)
        #expect(stats.trend.count == 30)
        #expect(stats.trend.last?.date == Self.day("2026-11-20"))
        #expect(stats.trend[28].exits == 1 && stats.trend[28].events == 3)
        let streak = UsageStreak.compute(exitDays: [Self.day("2026-11-18"), Self.day("2026-11-19")], today: Self.day("2026-11-20"))
        #expect(streak.currentDayCount == 2, "today without an exit does not break it")
        #expect(streak.startDate == Self.day("2026-11-18"))
        #expect(UsageStreak.compute(exitDays: [Self.day("2026-11-18")], today: Self.day("2026-11-20")).currentDayCount == 0)
    }

    // MARK: - Properties on random histories

    @Test func propertiesHoldOnRandomHistories() {
        var generator = SeededGenerator(seed: 20261120)
        let schedules: [HabitSchedule] = [.daily, .everyNDays(2), .everyNDays(3), .specificWeekdays([.monday, .thursday]), .frequencyWeekly(2), .frequencyMonthly(4)]
        for _ in 0..<300 {
            let today = Self.day("2026-11-20").adding(days: Int.random(in: -5...5, using: &generator))
            let habits = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                Self.habit(
                    schedules.randomElement(using: &generator)!, type: Bool.random(using: &generator) ? "formation" : "breaking",
                    start: Self.day("2026-10-01").adding(days: Int.random(in: 0...30, using: &generator)).description)
            }
            var records: [DayRecord] = []
            for habit in habits {
                for offset in 0..<60 where Int.random(in: 0..<3, using: &generator) > 0 {
                    let date = Self.day("2026-10-01").adding(days: offset)
                    records.append(
                        DayRecord(
                            habitID: habit.id, date: date, progressCount: Int.random(in: 0...4, using: &generator), goalCount: 2,
                            skipped: Int.random(in: 0..<15, using: &generator) == 0))
                }
            }
            // Now and then a second record for a day already recorded: the later one counts.
            for _ in 0..<Int.random(in: 0...2, using: &generator) {
                if let twin = records.randomElement(using: &generator) {
                    records.append(DayRecord(habitID: twin.habitID, date: twin.date, progressCount: Int.random(in: 0...4, using: &generator), goalCount: 2, skipped: false))
                }
            }
            let classifier = DayClassifier(habits: habits, records: records)
            let streak = GlobalStreak.compute(classifier, today: today)
            // The walk over the whole history agrees with classifying each day on its own.
            let walked = classifier.classifyAll(through: today)
            #expect(walked.allSatisfy { classifier.classify(dayNumber: $0.dayNumber) == $0.classification })
            #expect(walked.count == max(0, today.dayNumber - classifier.firstDay!.dayNumber + 1))
            #expect(streak.longestStreak >= streak.currentStreak && streak.currentStreak >= 0)
            let first = classifier.firstDay!
            let completeDays = first <= today ? (first.dayNumber...today.dayNumber).map(LocalDate.init(dayNumber:)).filter { classifier.classify($0) == .complete } : []
            #expect(streak.totalCompleteDays == completeDays.count)

            var ledger: [LocalDate: Int] = [:]
            for _ in 0..<3 {  // pushes arriving in any order converge
                let subset = Set(completeDays.filter { _ in Bool.random(using: &generator) })
                for correction in DailyCompletionXP.corrections(completeDays: subset, netAwards: ledger, setting: 50) { ledger[correction.date, default: 0] += correction.amount }
            }
            for correction in DailyCompletionXP.corrections(completeDays: Set(completeDays), netAwards: ledger, setting: 50) { ledger[correction.date, default: 0] += correction.amount }
            #expect(ledger.values.allSatisfy { $0 == 0 || $0 == 50 })
            #expect(ledger.filter { $0.value == 50 }.count == completeDays.count)
            let extra = Int.random(in: -3000...3000, using: &generator)
            let sum = ledger.values.reduce(0, +) + extra
            #expect(UserProgress(ledgerSum: sum).totalXP == max(0, sum))
        }
    }
}
