import Foundation
import SyncTestSupport
import TestSupport
import Testing

/// A day's timestamps follow its count, so they do not depend on which change arrives first
/// either (issue 44; `ProgressDayMergeTests` proves the rule over random histories).
@Suite struct ProgressTimestampArrivalTests {
    @Test func aSetAndALaterAdditionKeepTheSameTimestampsInEitherOrder() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            var stored: [[String]] = []
            for (user, setFirst) in [("set-first", true), ("addition-first", false)] {
                let phone = try await world.client(server, user: user, device: "phone")
                let watch = phone.withDevice("watch")
                let habit = UUID()
                #expect(try await phone.push([Wire.change("habits", habit, at: Wire.at(-600), record: Wire.habit())]).status(0) == "applied")
                // The phone sets 2 at 10:00 (two completions it saw); the watch, offline, added
                // one at 10:05.
                var set = Wire.progress(habit: habit, count: 2)
                set["timestamps"] = [Wire.at(-120), Wire.at(-60)]
                var added = Wire.progress(habit: habit, count: 3)
                added["timestamps"] = [Wire.at(300)]
                var addition = Wire.change("dailyProgress", UUID(), at: Wire.at(300), record: added)
                addition["increment"] = 1
                let setBody = try FieldMergeSyncTests.body([Wire.change("dailyProgress", UUID(), at: Wire.at(0), record: set)])
                let additionBody = try FieldMergeSyncTests.body([addition])
                for (device, body) in setFirst ? [(phone, setBody), (watch, additionBody)] : [(watch, additionBody), (phone, setBody)] {
                    #expect(try await device.pushRaw(body).status == 200)
                }
                let day = try await phone.state().values.first { $0["collection"] as? String == "dailyProgress" }
                let record = day?["record"] as? JSON
                #expect(record?["progressCount"] as? Int == 3, "\(user)")
                stored.append(record?["timestamps"] as? [String] ?? [])
            }
            #expect(stored[0] == stored[1], "\(stored)")
            #expect(stored[0] == [Wire.at(-120), Wire.at(-60), Wire.at(300)])
        }
    }
}
