import Foundation
import HabitSyncClient
import HabitSyncDomain
import Testing

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    // Safe: only the test's own task reads and writes it, one step at a time.
    var now = Date(timeIntervalSince1970: 1_795_000_000)
}

@Suite struct LocalStoreTests {
    static let habit: [String: JSONValue] = [
        "name": .string("Read"), "habitType": .string("formation"), "goalCount": .number(1), "goalUnit": .string("pages"),
        "schedule": .object(["type": .string("daily")]), "startDate": .string("2026-11-01"),
    ]

    static func store(_ clock: ManualClock = ManualClock(), path: String? = nil, device: String = "phone") throws -> LocalStore {
        try LocalStore(path: path, deviceID: device, now: { clock.now })
    }

    static func changes(_ batch: OutgoingBatch) throws -> [[String: JSONValue]] {
        guard case .object(let body) = try JSONParser.parse(batch.body), case .array(let changes)? = body["changes"] else { return [] }
        return changes.compactMap { if case .object(let change) = $0 { change } else { nil } }
    }

    @Test func savesAreValidatedWithTheServersRules() throws {
        let store = try Self.store()
        var bad = Self.habit
        bad["goalCount"] = .number(0)
        #expect(throws: ChangeRejection.self) { try store.save(.habits, fields: bad) }
        do {
            try store.save(.habits, fields: bad)
        } catch let rejection as ChangeRejection {
            #expect(rejection.field == "goalCount")
        }
        #expect(throws: LocalStoreError.derivedCollection) { try store.save(.globalStreak, fields: [:]) }
        #expect(try store.pendingCount() == 0)
        let saved = try store.save(.habits, fields: Self.habit)
        #expect(saved.syncStatus == .pending)
        #expect(saved.updatedBy == "phone")
        #expect(try store.pendingCount() == 1)
    }

    @Test func appendOnlyRecordsAreWrittenOnce() throws {
        let store = try Self.store()
        let id = UUID()
        let event: [String: JSONValue] = ["eventType": .string("exit_to_focus"), "timestamp": .string("2026-11-17T07:00:00.000Z"), "pauseDuration": .number(5), "timerDuration": .number(30)]
        try store.save(.usageEvents, id: id, fields: event)
        try store.save(.usageEvents, id: id, fields: event)  // the same again: harmless
        var other = event
        other["timerDuration"] = .number(60)
        #expect(throws: LocalStoreError.immutableRecord) { try store.save(.usageEvents, id: id, fields: other) }
        #expect(throws: LocalStoreError.immutableRecord) { try store.delete(.usageEvents, id: id) }
        #expect(try store.pendingCount() == 1)
    }

    @Test func updatedAtNeverFallsBehindWhatTheDeviceHasSeen() throws {
        #expect(SyncClock.nextUpdatedAt(now: Date(timeIntervalSince1970: 10), newestSeen: nil) == Date(timeIntervalSince1970: 10))
        #expect(SyncClock.nextUpdatedAt(now: Date(timeIntervalSince1970: 10), newestSeen: Date(timeIntervalSince1970: 20)) == Date(timeIntervalSince1970: 20.001))
        #expect(SyncClock.nextUpdatedAt(now: Date(timeIntervalSince1970: 30.0004), newestSeen: Date(timeIntervalSince1970: 20)) == Date(timeIntervalSince1970: 30))
        let clock = ManualClock()
        let store = try Self.store(clock)
        let id = UUID()
        let first = try store.save(.habits, id: id, fields: Self.habit)
        clock.now = clock.now.addingTimeInterval(-3600)  // the device's clock jumps back an hour
        let second = try store.save(.habits, id: id, fields: Self.habit.merging(["name": .string("Renamed")]) { $1 })
        #expect(second.updatedAt > first.updatedAt)
        #expect(WireTime.milliseconds(second.updatedAt) == WireTime.milliseconds(first.updatedAt) + 1)
    }

    @Test func editsOfOneRecordCoalesceAndTheBatchIsSentByteForByteUntilAnswered() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("habitsync-client-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let id = UUID()
        var firstBatch: OutgoingBatch?
        do {
            let store = try Self.store(path: path)
            for name in ["Read", "Read more", "Read daily"] {
                var fields = Self.habit
                fields["name"] = .string(name)
                try store.save(.habits, id: id, fields: fields)
            }
            try store.save(.habits, fields: Self.habit)
            #expect(try store.pendingCount() == 2)
            firstBatch = try store.nextBatch(maximumChanges: 1)
            let changes = try Self.changes(try #require(firstBatch))
            #expect(changes.count == 1)
            guard case .object(let record)? = changes.first?["record"] else { Issue.record("no record"); return }
            #expect(record["name"] == .string("Read daily"))
            #expect(try store.nextBatch() == firstBatch)
        }
        // The app restarts: the same batch, the same bytes.
        let reopened = try Self.store(path: path)
        #expect(try reopened.nextBatch() == firstBatch)
    }

    @Test func theAnswerSettlesEachRecord() throws {
        let clock = ManualClock()
        let store = try Self.store(clock)
        let applied = UUID(), superseded = UUID(), rejected = UUID(), editedInFlight = UUID(), progress = UUID(), canonical = UUID()
        for id in [applied, superseded, rejected, editedInFlight] { try store.save(.habits, id: id, fields: Self.habit) }
        try store.save(
            .dailyProgress, id: progress,
            fields: [
                "habitId": .string(applied.uuidString), "date": .string("2026-11-20"),
                "progressCount": .number(1), "goalCount": .number(1),
            ])
        let batch = try #require(try store.nextBatch())
        #expect(batch.changeCount == 5)
        var edited = Self.habit
        edited["name"] = .string("Edited while the batch was out")
        try store.save(.habits, id: editedInFlight, fields: edited)

        let winner =
            "{\"collection\":\"habits\",\"op\":\"upsert\",\"id\":\"\(superseded.uuidString.lowercased())\",\"serverVersion\":7,\"updatedAt\":\"2027-01-01T00:00:00.000Z\",\"updatedBy\":\"watch\",\"record\":{\"name\":\"Watch's\"}}"
        let response = """
            {"batchId":"\(batch.batchID.uuidString.lowercased())","results":[
            {"index":0,"id":"\(applied.uuidString.lowercased())","status":"applied","serverVersion":5},
            {"index":1,"id":"\(superseded.uuidString.lowercased())","status":"superseded","serverVersion":7,"current":\(winner)},
            {"index":2,"id":"\(rejected.uuidString.lowercased())","status":"rejected","error":{"code":"invalid_field","field":"name","message":"too long"}},
            {"index":3,"id":"\(editedInFlight.uuidString.lowercased())","status":"applied","serverVersion":8},
            {"index":4,"id":"\(progress.uuidString.lowercased())","status":"applied","serverVersion":9,"canonicalId":"\(canonical.uuidString.lowercased())"}]}
            """
        let report = try store.settle(batch, responseBody: Data(response.utf8))
        #expect(report.applied == 3)
        #expect(report.conflicts.map(\.winnerUpdatedBy) == ["watch"])
        #expect(report.rejected.map(\.failure) == [SyncFailure(code: "invalid_field", field: "name", message: "too long")])
        #expect(report.rekeyed.map(\.to) == [canonical])

        let appliedRecord = try #require(try store.record(.habits, id: applied))
        #expect(appliedRecord.syncStatus == .synced && appliedRecord.serverVersion == 5 && appliedRecord.lastSyncedAt != nil)
        let adopted = try #require(try store.record(.habits, id: superseded))
        #expect(adopted.syncStatus == .synced && adopted.updatedBy == "watch" && adopted.fields?["name"] == .string("Watch's"))
        let failed = try #require(try store.record(.habits, id: rejected))
        #expect(failed.syncStatus == .failed && failed.failure?.field == "name")
        let stillPending = try #require(try store.record(.habits, id: editedInFlight))
        #expect(stillPending.syncStatus == .pending && stillPending.serverVersion == 8)
        #expect(try store.record(.dailyProgress, id: progress) == nil)
        #expect(try store.record(.dailyProgress, id: canonical)?.syncStatus == .synced)

        // Only the edit made in flight is sent next: the rejected one waits for the app.
        let next = try #require(try store.nextBatch())
        #expect(next.batchID != batch.batchID)
        let changes = try Self.changes(next)
        #expect(changes.map { $0["id"] } == [.string(editedInFlight.uuidString.lowercased())])
        // The winner's time moved the clock: the next write is after it, whatever the device's clock says.
        let after = try store.save(.habits, id: applied, fields: Self.habit.merging(["name": .string("Renamed")]) { $1 })
        #expect(WireTime.milliseconds(after.updatedAt) > WireTime.milliseconds(try #require(WireTime.parse("2027-01-01T00:00:00.000Z"))))
    }

    @Test func anAnswerWithNumbersNoIntegerHoldsIsRefusedNotATrap() throws {
        let store = try Self.store()
        try store.save(.habits, fields: Self.habit)
        let batch = try #require(try store.nextBatch())
        for index in ["1e308", "-1e308", "0.5", "1e19"] {
            let response = "{\"batchId\":\"\(batch.batchID.uuidString.lowercased())\",\"results\":[{\"index\":\(index),\"status\":\"applied\"}]}"
            #expect(throws: SyncProtocolError.malformedResponse) { try store.settle(batch, responseBody: Data(response.utf8)) }
        }
        let huge = "{\"batchId\":\"x\",\"results\":[{\"index\":0,\"status\":\"applied\",\"serverVersion\":1e308}]}"
        #expect(try store.settle(batch, responseBody: Data(huge.utf8)).applied == 1)
        #expect(try store.records(.habits).first?.serverVersion == nil)
    }

    @Test func aViewFollowsTheStore() async throws {
        let store = try Self.store()
        var updates = store.observe(.habits).makeAsyncIterator()
        #expect(try await updates.next()?.count == 0)
        try store.save(.habits, fields: Self.habit)
        #expect(try await updates.next()?.count == 1)
    }

    @Test func aStoreBelongsToOneAccountAndCanBeErased() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("habitsync-client-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            let store = try LocalStore(path: path, deviceID: "phone", account: "ada")
            try store.save(.habits, fields: Self.habit)
        }
        #expect(throws: LocalStoreError.otherAccount) { try LocalStore(path: path, deviceID: "phone", account: "grace") }
        #expect(try LocalStore(path: path, deviceID: "phone", account: "ada").pendingCount() == 1)
        try LocalStore.erase(path: path)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try LocalStore(path: path, deviceID: "phone", account: "grace").pendingCount() == 0)
    }

    @Test func aFailedEditCanBeCorrectedOrDiscarded() throws {
        let clock = ManualClock()
        let store = try Self.store(clock)
        let event: [String: JSONValue] = ["amount": .number(10), "reason": .string("ran"), "timestamp": .string(WireTime.format(clock.now))]
        let xp = try store.save(.xpTransactions, fields: event)
        let habit = try store.save(.habits, fields: Self.habit)
        let batch = try #require(try store.nextBatch())
        let rejected = #"{"code":"timestamp_in_future","field":"timestamp","message":"too far ahead"}"#
        _ = try store.settle(
            batch,
            responseBody: Data(
                """
                {"batchId":"\(batch.batchID)","results":[
                 {"index":0,"id":"\(xp.id)","status":"rejected","error":\(rejected)},
                 {"index":1,"id":"\(habit.id)","status":"rejected","error":\(rejected)}]}
                """.utf8))
        #expect(try store.record(.xpTransactions, id: xp.id)?.syncStatus == .failed)
        // An append-only record the server refused may be written again, corrected.
        var corrected = event
        corrected["timestamp"] = .string(WireTime.format(clock.now.addingTimeInterval(-60)))
        #expect(try store.save(.xpTransactions, id: xp.id, fields: corrected).syncStatus == .pending)
        // A failed record the server never had is simply dropped when discarded.
        try store.discardFailedEdit(.habits, id: habit.id)
        #expect(try store.record(.habits, id: habit.id) == nil)
        #expect(try store.pendingCount() == 1)
    }
}
