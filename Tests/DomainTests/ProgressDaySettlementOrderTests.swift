import Foundation
import HabitSyncDomain
import SeededRandom
import Testing

/// `ProgressDaySettlement` over every arrival order of three devices' pushes, each device naming
/// the days of two habits with ids of its own: whichever push creates a day, the others' changes
/// land on it (by habit and date), and every order ends with the same days, counts and keys.
@Suite struct ProgressDaySettlementOrderTests {
    static let habits = [UUID(uuidString: "6a3a2c9e-0000-4000-8000-000000000001"), UUID(uuidString: "6a3a2c9e-0000-4000-8000-000000000002")]
        .compactMap { $0 }
    static let dates = [LocalDate(year: 2026, month: 11, day: 23), LocalDate(year: 2026, month: 11, day: 24)].compactMap { $0 }
    static let devices = ["phone", "watch", "caf\u{E9}"]
    static let base = Date(timeIntervalSince1970: 1_795_162_530)

    /// The days as the store would hold them: rows by id, each with its additions.
    struct Store {
        var days: [UUID: ProgressDaySettlement.StoredDay] = [:]
        var version: Int64 = 0
        var pushes = 0

        mutating func push(_ changes: [PushChange], from device: String) {
            pushes += 1
            let batch = UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", pushes)) ?? UUID()
            // What the store reads: the days of the changes' ids, and of their habits and dates.
            let ids = Set(changes.map(\.id))
            let natural = Set(
                changes.compactMap { change -> String? in
                    if case .dailyProgress(let record)? = change.record { return "\(record.habitId)|\(record.date)" }
                    return nil
                })
            let stored = days.values.filter { day in
                ids.contains(day.id) || day.fields.habitID.flatMap { h in day.fields.date.map { natural.contains("\(h)|\($0)") } } == true
            }
            let settlement = ProgressDaySettlement(changes: changes, stored: stored, device: device, batch: batch, firstVersion: version + 1)
            version = settlement.nextVersion - 1
            for write in settlement.writes {
                days[write.id] = .after(write, of: settlement, previous: days[write.id], device: device, batch: batch)
            }
        }

        /// What a pull shows, by habit and date: the count, the record's key, the goal.
        var picture: [String: String] {
            days.values.reduce(into: [:]) { picture, day in
                guard let habit = day.fields.habitID, let date = day.fields.date else { return }
                let key = day.merge.key
                let count = day.merge.record?.progressCount ?? -1, goal = day.fields.goalCount ?? -1
                picture["\(habit)|\(date)"] = "count \(count), goal \(goal), key \(key.updatedAtMilliseconds) \(key.deviceID)"
            }
        }
    }

    @Test(arguments: 0..<200) func everyOrderOfThreeDevicesPushesEndsWithTheSameDays(seed: Int) {
        var generator = SeededGenerator(seed: UInt64(seed) &+ 63_063)
        var pushes: [(device: String, changes: [PushChange])] = []
        var model: [String: [ProgressCounter.Operation]] = [:]
        var index = 0
        for (d, device) in Self.devices.enumerated() {
            var changes: [PushChange] = []
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let habit = Self.habits.randomElement(using: &generator) ?? Self.habits[0]
                let date = Self.dates.randomElement(using: &generator) ?? Self.dates[0]
                // Each device its own id for a day; each change its own time.
                let day = (habit == Self.habits[0] ? 0 : 2) + (date == Self.dates[0] ? 0 : 1)
                let id = UUID(uuidString: String(format: "d%07d-0000-4000-8000-%012d", d, day)) ?? UUID()
                let at = Self.base.addingTimeInterval(Double(index) + Double(Int.random(in: 0..<30, using: &generator)) * 10)
                let key = LWWKey(updatedAt: at, deviceID: device)
                let isSet = Int.random(in: 0..<3, using: &generator) == 0
                let count = Int.random(in: 0...4, using: &generator)
                let record = DailyProgressRecord(
                    habitId: habit, date: date, progressCount: count, goalCount: Int.random(in: 1...3, using: &generator), timestamps: [],
                    difficulty: nil, skipReason: nil, skipNote: nil)
                changes.append(
                    PushChange(
                        index: changes.count, collection: .dailyProgress, op: .upsert, id: id, updatedAt: at, clamped: false,
                        record: .dailyProgress(record), rawRecord: nil, increment: isSet ? nil : 1))
                model["\(habit)|\(date)", default: []].append(
                    isSet ? .set(.init(value: count, at: key)) : .add(id: "\(device)|\(index)", .init(delta: 1, at: key)))
                index += 1
            }
            pushes.append((device, changes))
        }
        var pictures: Set<[String: String]> = []
        for order in ArrivalOrder.permutations(pushes) {
            var store = Store()
            for push in order { store.push(push.changes, from: push.device) }
            // One row per habit and date, whatever ids the devices gave it.
            #expect(store.days.count == model.count, "seed \(seed)")
            for (day, operations) in model {
                let count = store.picture[day].flatMap { $0.split(separator: ",").first }.map(String.init)
                #expect(count == "count \(ProgressCounter(operations).count)", "seed \(seed): \(day)")
            }
            pictures.insert(store.picture)
        }
        #expect(pictures.count == 1, "seed \(seed): \(pictures)")
    }
}
