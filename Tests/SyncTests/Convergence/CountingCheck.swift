import Foundation
import HabitSyncDomain
import LibPQClient
import Testing

/// No completion lost, none counted twice: from every push the server answered (as the fault
/// injecting transport saw them, answers the devices never got included), the increments the
/// server acknowledged (applied or superseded, each `(device, batch, index)` once however
/// often it was sent), summed per habit and day, must be each day's count on the server.
///
/// Days a set or a delete reached (a whole-record upsert, a delete, or their habit's delete,
/// which tombstones its days) are left out: their count depends on when each addition was made
/// relative to that set, which `ProgressDayMergeTests` checks against the model instead.
struct CountingCheck {
    struct Day: Hashable { let habit: String; let date: String }

    private(set) var sums: [Day: Int] = [:]
    private(set) var excluded: Set<Day> = []
    private(set) var additions = 0

    init(_ pushes: [FaultInjectingTransport.AnsweredPush], devices: Set<String>) {
        var acknowledged: [String: (day: Day, delta: Int)] = [:]
        var deletedHabits: Set<String> = []
        var progressIDs: [String: Day] = [:]
        var deletedIDs: Set<String> = []
        for push in pushes where devices.contains(push.device) {
            guard let body = try? JSONSerialization.jsonObject(with: push.body) as? [String: Any],
                let answer = try? JSONSerialization.jsonObject(with: push.response) as? [String: Any],
                let batch = body["batchId"] as? String, let changes = body["changes"] as? [[String: Any]],
                let results = answer["results"] as? [[String: Any]]
            else { continue }
            var status: [Int: String] = [:]
            for result in results { if let index = result["index"] as? Int { status[index] = result["status"] as? String } }
            for (index, change) in changes.enumerated() {
                let collection = change["collection"] as? String
                let id = (change["id"] as? String)?.lowercased() ?? ""
                if collection == "habits", change["op"] as? String == "delete" { deletedHabits.insert(id) }
                guard collection == "dailyProgress" else { continue }
                guard let record = change["record"] as? [String: Any] else {
                    deletedIDs.insert(id)
                    continue
                }
                guard let habit = (record["habitId"] as? String)?.lowercased(), let date = record["date"] as? String else { continue }
                let day = Day(habit: habit, date: date)
                progressIDs[id] = day
                if let canonical = (results.first { $0["index"] as? Int == index }?["canonicalId"] as? String)?.lowercased() { progressIDs[canonical] = day }
                guard let delta = change["increment"] as? Int else {
                    excluded.insert(day)  // a set
                    continue
                }
                if status[index] == "applied" || status[index] == "superseded" {
                    acknowledged["\(push.device)|\(batch)|\(index)"] = (day, delta)
                }
            }
        }
        for id in deletedIDs { if let day = progressIDs[id] { excluded.insert(day) } }
        for (day, delta) in acknowledged.values where !deletedHabits.contains(day.habit) && !excluded.contains(day) {
            sums[day, default: 0] += delta
            additions += 1
        }
        excluded.formUnion(sums.keys.filter { deletedHabits.contains($0.habit) })
    }

    /// Checks the user's live days against the sums; returns how many days were compared.
    func check(_ connection: PGConnection, tenant: UUID, user: String) async throws -> Int {
        let rows = try await connection.query(
            """
            SELECT habit_id::text AS habit, date::text AS date, progress_count FROM daily_progress
            WHERE tenant_id = \(tenant) AND user_id = \(user) AND deleted_at IS NULL
            """
        ).rows
        var stored: [Day: Int] = [:]
        for row in rows { stored[Day(habit: try row.decode("habit"), date: try row.decode("date"))] = try row.decode("progress_count", as: Int.self) }
        var compared = 0
        for (day, sum) in sums {
            #expect(
                stored[day] == max(0, sum),
                "\(user): habit \(day.habit) on \(day.date) counts \(stored[day].map(String.init) ?? "nothing") on the server; the devices' acknowledged increments sum to \(sum)")
            compared += 1
        }
        return compared
    }
}
