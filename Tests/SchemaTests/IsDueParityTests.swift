import Foundation
import HabitSyncDomain
import LibPQClient
import SeededRandom
import TestSupport
import Testing

/// The SQL "is due" function and the Swift rule agree on every generated case.
@Suite struct IsDueParityTests {
    struct Case {
        let schedule: HabitSchedule
        let start: LocalDate
        let end: LocalDate?
        let day: LocalDate
    }

    static func cases(count: Int) -> [Case] {
        var random = SeededGenerator(seed: 0x1_5D0E)
        // Month ends, leap days and plain days, 2023–2028.
        let anchors = [
            "2023-01-31", "2023-02-28", "2023-03-01", "2023-12-31", "2024-02-28", "2024-02-29", "2024-03-01",
            "2025-06-30", "2026-11-20", "2027-02-28", "2028-02-29", "2028-12-31",
        ].map { LocalDate($0)! }
        let weekdays = Weekday.allCases
        return (0..<count).map { index in
            let start = anchors[Int(random.next() % UInt64(anchors.count))].adding(days: Int(random.next() % 40) - 20)
            let end: LocalDate? = random.next() % 3 == 0 ? start.adding(days: Int(random.next() % 400)) : nil
            let schedule: HabitSchedule
            switch index % 5 {
            case 0: schedule = .daily
            case 1: schedule = .everyNDays(1 + Int(random.next() % 10))
            case 2:
                let chosen = weekdays.filter { _ in random.next() % 2 == 0 }
                schedule = .specificWeekdays(chosen.isEmpty ? [weekdays[index % 7]] : chosen)
            case 3: schedule = .frequencyWeekly(1 + Int(random.next() % 7))
            default: schedule = .frequencyMonthly(1 + Int(random.next() % 31))
            }
            let day = start.adding(days: Int(random.next() % 500) - 50)
            return Case(schedule: schedule, start: start, end: end, day: day)
        }
    }

    @Test func sqlAndSwiftAgreeOnTwelveThousandCases() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let cases = Self.cases(count: 12_000)
        let sqlAnswers = try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT habitsync_is_due(c.type, c.n, string_to_array(c.weekdays, ','), c.start_date, c.end_date, c.day) AS due
                    FROM unnest(\(cases.map(\.schedule.type)), \(cases.map { $0.schedule.n.map(Int32.init) }), \(cases.map { $0.schedule.weekdays?.map(\.rawValue).joined(separator: ",") }),
                                \(cases.map { $0.start.description })::date[], \(cases.map { $0.end?.description })::date[], \(cases.map { $0.day.description })::date[])
                         WITH ORDINALITY AS c(type, n, weekdays, start_date, end_date, day, position)
                    ORDER BY c.position
                    """
                ).rows.map { try $0.decode("due", as: Bool.self) }
            }
        }
        #expect(sqlAnswers.count == cases.count)
        var disagreements: [String] = []
        for (testCase, sql) in zip(cases, sqlAnswers) {
            let swift = HabitDefinition(id: UUID(), habitType: "formation", schedule: testCase.schedule, startDate: testCase.start, endDate: testCase.end).isDue(on: testCase.day)
            if swift != sql { disagreements.append("\(testCase.schedule) \(testCase.start)…\(testCase.end?.description ?? "") on \(testCase.day): swift \(swift), sql \(sql)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, e.g. \(disagreements.prefix(3))")
        // The generated cases cover what matters.
        #expect(sqlAnswers.filter { $0 }.count > 2000)
        #expect(Set(cases.map(\.day.weekday)).count == 7)
        #expect(cases.contains { $0.day == LocalDate("2024-02-29") || $0.day == LocalDate("2028-02-29") })
        #expect(cases.contains { $0.day.day == 31 })
    }
}
