import Foundation
import HabitSyncClient
import HabitSyncDomain
import SyncTestSupport
import TestSupport
import Testing

/// Issue 48's demonstration field, end to end: `sortOrder` was added to habits with one
/// declaration (`HabitRecord.fields`), one migration (0039), the SDK's `Habit` and the contract
/// (`openapi.yaml`, `docs/data-model.md`). Through the SDK's typed model it syncs, merges field by
/// field with a concurrent edit of another field, clears to null, and a value PostgreSQL would
/// refuse is rejected first, naming the field.
@Suite struct HabitSortOrderTests {
    @Test func aHabitsPlaceInTheListSyncsMergesAndClears() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let phoneClock = ClientSDKTests.DeviceClock(), watchClock = ClientSDKTests.DeviceClock()
            let phone = try await ClientSDKTests.device(world, server, "phone", clock: phoneClock)
            let watch = try await ClientSDKTests.device(world, server, "watch", clock: watchClock)

            let id = try phone.store.save(Habit(name: "Read", startDate: ClientSDKTests.day, sortOrder: 2)).id
            #expect(try await phone.sync().pushed.applied == 1)
            _ = try await watch.sync()
            #expect(try watch.store.fetch(Habit.self, id: id)?.value.sortOrder == 2)
            #expect(try await world.count("habits", where: "sort_order = 2") == 1, "stored in its column")

            // Offline, the watch moves it to the top and the phone renames it: both survive.
            var moved = try #require(try watch.store.fetch(Habit.self, id: id)).value
            moved.sortOrder = 0
            watchClock.now = Date().addingTimeInterval(1)
            try watch.store.save(moved, id: id)
            var renamed = try #require(try phone.store.fetch(Habit.self, id: id)).value
            renamed.name = "Read books"
            phoneClock.now = Date().addingTimeInterval(2)
            try phone.store.save(renamed, id: id)
            _ = try await watch.sync()
            _ = try await phone.sync()
            _ = try await watch.sync()
            for device in [phone, watch] {
                let habit = try #require(try device.store.fetch(Habit.self, id: id)).value
                #expect(habit.sortOrder == 0 && habit.name == "Read books", "\(habit)")
            }

            // Cleared on one device, cleared everywhere (sent as null, not left out).
            var cleared = try #require(try phone.store.fetch(Habit.self, id: id)).value
            cleared.sortOrder = nil
            phoneClock.now = Date().addingTimeInterval(3)
            try phone.store.save(cleared, id: id)
            _ = try await phone.sync()
            _ = try await watch.sync()
            #expect(try watch.store.fetch(Habit.self, id: id)?.value.sortOrder == nil)
            #expect(try await world.count("habits", where: "sort_order IS NULL AND name = 'Read books'") == 1)

            // What the column's CHECK would refuse is rejected by the push, naming the field.
            let client = try await world.client(server, user: "ada", device: "raw")
            var record = Wire.habit()
            record["sortOrder"] = -1
            let reply = try await client.push([Wire.change("habits", UUID(), at: Wire.at(0), record: record)])
            #expect(reply.status(0) == "rejected" && reply.errorCode(0) == "invalid_field")
            #expect((reply.result(0)["error"] as? JSON)?["field"] as? String == "sortOrder")
        }
    }
}
