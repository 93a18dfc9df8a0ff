import Foundation
import ServerHarness
import TestSupport
import Testing

/// `habitsync-device --history-days`, as an operator or a device developer runs it: a watch
/// keeps its last days of dated history only, says so when the number is not one, and
/// widening its window pulls again what it left out (docs/client.md, "A new phone: the main
/// screen first").
@Suite struct DeviceWindowTests {
    /// What a `sync` printed: the records its first sync took (`first sync: complete after N`)
    /// and the changes it pulled (`…; pulled N`).
    static func figure(_ lines: [String], after prefix: String) throws -> Int {
        let line = try #require(lines.first { $0.contains(prefix) }, "no `\(prefix)` in \(lines)")
        let tail = line[try #require(line.range(of: prefix)).upperBound...]
        return try #require(Int(tail.prefix { $0.isNumber }), "\(line)")
    }

    @Test func aWatchKeepsItsDaysAndGetsTheRestWhenItWidens() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            // One habit done today, and a day of it 45 days ago (not complete, so the server
            // awards nothing for it): the only record a 30-day window leaves out.
            let setup = """
                B=
                D=
                $B tenant create demo >/dev/null
                export HABITSYNC_TOKEN=$($B token mint --tenant demo --user dana)
                H=$(cat /proc/sys/kernel/random/uuid)
                TODAY=$(date -u +%F); OLD=$(date -u -d '45 days ago' +%F); NOW=$(date -u +%FT%T.000Z)
                curl -s -X POST localhost:8080/v1/sync/push -H "Authorization: Bearer $HABITSYNC_TOKEN" -H 'X-Device-Id: old-phone' -H 'Content-Type: application/json' \\
                  -d '{"batchId":"'$(cat /proc/sys/kernel/random/uuid)'","changes":[
                    {"collection":"habits","op":"upsert","id":"'$H'","updatedAt":"'$NOW'","record":{"name":"Read","habitType":"formation",
                     "goalCount":10,"goalUnit":"pages","schedule":{"type":"daily"},"startDate":"2020-01-01"}},
                    {"collection":"dailyProgress","op":"upsert","id":"'$(cat /proc/sys/kernel/random/uuid)'","updatedAt":"'$NOW'",
                     "record":{"habitId":"'$H'","date":"'$TODAY'","progressCount":10,"goalCount":10}},
                    {"collection":"dailyProgress","op":"upsert","id":"'$(cat /proc/sys/kernel/random/uuid)'","updatedAt":"'$NOW'",
                     "record":{"habitId":"'$H'","date":"'$OLD'","progressCount":3,"goalCount":10}}]}'
                """
            let printed = try await DocumentedExampleTests.run(
                [
                    setup,
                    "$D --device phone sync",
                    "$D --device watch --history-days 30 sync",
                    "$D --device watch --history-days 0 sync 2>&1 || echo \"refused: $?\"",
                    "$D --device watch --history-days 20 sync",
                    "$D --device watch --history-days 60 sync",
                ], server: server, environment: ["DATABASE_URL": database.connectionString, "HABITSYNC_SERVER": server.baseURL, "HABITSYNC_TIMEOUT": "900"])
            try #require(printed.count == 6)
            #expect(printed[0].joined().components(separatedBy: "\"status\":\"applied\"").count == 4, "\(printed[0])")
            let phone = try Self.figure(printed[1], after: "first sync: complete after ")
            let watch = try Self.figure(printed[2], after: "first sync: complete after ")
            // The watch has everything but the day 45 days ago.
            #expect(phone - watch == 1, "phone \(printed[1]), watch \(printed[2])")
            #expect(try Self.figure(printed[2], after: "; pulled ") == watch)
            // A window that is not a number of days changes nothing and says why.
            #expect(printed[3].contains { $0.contains("--history-days is a whole number of days, 1 to 36500; got 0") }, "\(printed[3])")
            #expect(printed[3].last?.hasPrefix("refused: ") == true && printed[3].last != "refused: 0", "\(printed[3])")
            // Narrowing needs nothing from the server; widening starts the pull over and brings
            // every record again, the old day too.
            #expect(try Self.figure(printed[4], after: "; pulled ") == 0, "\(printed[4])")
            #expect(try Self.figure(printed[5], after: "; pulled ") == phone, "\(printed[5])")
        }
    }
}
