import Foundation
import HabitSyncDomain

/// A batch whose every record can be found again: a new habit, 20 days of progress on it and
/// 20 usage events, all under fresh ids, so "how much of this batch is stored" has an exact
/// answer (0 or all 41).
struct TrackedBatch: Sendable {
    let id: UUID
    let body: Data
    let recordIDs: [UUID]

    static let changeCount = 41

    init(round: Int) {
        id = UUID()
        let habit = UUID()
        let at = WireTime.format(Date(timeIntervalSince1970: 1_795_000_000 + Double(round)))
        var changes: [[String: Any]] = [
            [
                "collection": "habits", "op": "upsert", "id": habit.uuidString, "updatedAt": at,
                "record": ["name": "Habit \(round)", "habitType": "formation", "goalCount": 2, "goalUnit": "times", "schedule": ["type": "daily"], "startDate": "2026-06-01"],
            ]
        ]
        var ids = [habit]
        for day in 0..<20 {
            let progress = UUID()
            ids.append(progress)
            changes.append([
                "collection": "dailyProgress", "op": "upsert", "id": progress.uuidString, "updatedAt": at,
                "record": [
                    "habitId": habit.uuidString, "date": LocalDate(dayNumber: LocalDate(year: 2026, month: 6, day: 1)!.dayNumber + day).description,
                    "progressCount": day % 3, "goalCount": 2,
                ],
            ])
        }
        for n in 0..<20 {
            let event = UUID()
            ids.append(event)
            changes.append([
                "collection": "usageEvents", "op": "upsert", "id": event.uuidString, "updatedAt": at,
                "record": [
                    "eventType": "exit_to_focus", "timestamp": WireTime.format(Date(timeIntervalSince1970: 1_795_000_000 + Double(round * 20 + n))),
                    "pauseDuration": n, "timerDuration": 30,
                ],
            ])
        }
        recordIDs = ids
        body = try! JSONSerialization.data(withJSONObject: ["batchId": id.uuidString, "changes": changes])
    }
}
