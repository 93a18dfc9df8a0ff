import Foundation
import HabitSyncDomain
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Responses of the real server, over HTTP, checked against the served OpenAPI document.
@Suite struct OpenAPIConformanceTests {
    @Test func everyResponseConformsToTheServedDocument() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let served = try await server.get("/openapi.yaml")
            #expect(served.status == 200)
            #expect(served.header("Content-Type")?.hasPrefix("application/yaml") == true)
            #expect(served.body == (try Data(contentsOf: OpenAPIValidator.documentURL)), "the served document is the repository's")
            let spec = try OpenAPIValidator(yaml: served.text)

            var checked = 0
            func check(_ path: String, _ method: String, _ status: Int, _ body: Data, _ label: String) throws {
                guard let documented = spec.responseSchema(path: path, method: method, status: status) else {
                    Issue.record("\(label): \(method) \(path) answered \(status), which the document does not list")
                    return
                }
                guard let schema = documented else { return }
                let value = try JSONDecoder().decode(JSONValue.self, from: body)
                let errors = spec.validate(value, against: schema)
                #expect(errors.isEmpty, "\(label): \(errors.prefix(5).map(\.description).joined(separator: "; "))")
                checked += 1
            }

            let device = try await world.client(server, user: "alice")
            let habit = UUID(), progress = UUID(), session = UUID()
            let changes: [JSON] = [
                Wire.change(
                    "habits", habit, at: Wire.at(0),
                    record: Wire.habit().merging(["color": "#FF8800", "habitDescription": "pages a day", "endDate": Wire.day(40)]) { _, n in n }),
                Wire.change(
                    "habits", UUID(), at: Wire.at(0),
                    record: [
                        "name": "Quit", "habitType": "breaking", "goalCount": 2, "baselineCount": 10, "goalUnit": "cups",
                        "schedule": ["type": "specificWeekdays", "weekdays": ["monday", "friday"]], "startDate": Wire.day(-19),
                    ]),
                Wire.change("reminders", UUID(), at: Wire.at(1), record: Wire.reminder(habit: habit)),
                Wire.change(
                    "dailyProgress", progress, at: Wire.at(1),
                    record: Wire.progress(habit: habit).merging(["timestamps": [Wire.at(1)], "difficulty": 3, "skipReason": "rest", "skipNote": "tired"]) { _, n in n }),
                Wire.change("xpTransactions", UUID(), at: Wire.at(1), record: Wire.xp().merging(["date": Wire.day(0)]) { _, n in n }),
                Wire.change("achievements", UUID(), at: Wire.at(1), record: Wire.achievement()),
                Wire.change("focusSessions", session, at: Wire.at(1), record: Wire.focus(state: "active", duration: 0)),
                Wire.change(
                    "usageEvents", UUID(), at: Wire.at(1), record: ["eventType": "proceed_to_app", "timestamp": Wire.at(1), "targetAppName": "Instagram", "pauseDuration": 5, "timerDuration": 30]),
                Wire.change("selectedApps", UUID(), at: Wire.at(1), record: Wire.selectedApp()),
                Wire.change("userSettings", UUID(), at: Wire.at(1), record: ["selectedInterestTags": ["focus"], "frePhase": "phase1Complete"]),
                Wire.change("habits", habit, at: Wire.at(-10), record: Wire.habit()),
                Wire.change("habits", UUID(), at: WireTime.format(Date().addingTimeInterval(86_400)), record: Wire.habit()),
                Wire.change("globalStreak", UUID(), at: Wire.at(0), record: [:]),
                Wire.change("dailyProgress", UUID(), at: Wire.at(2), record: Wire.progress(habit: habit).merging(["progressCount": 4]) { _, n in n }),
            ]
            // The requests conform too.
            let request = try JSONDecoder().decode(JSONValue.self, from: JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": Array(changes.prefix(10))]))
            #expect(spec.validate(request, against: spec.schema(named: "PushRequest")).isEmpty)

            let first = try await device.push(changes)
            try check("/v1/sync/push", "post", first.status, first.body, "push with every status")
            #expect(Set(first.results.compactMap { $0["status"] as? String }) == ["applied", "superseded", "rejected"])
            let again = try await device.push(Array(changes.prefix(2)))
            try check("/v1/sync/push", "post", again.status, again.body, "unchanged")
            _ = try await device.push([Wire.change("habits", habit, at: Wire.at(50), record: nil)])

            for (label, query) in [
                ("initial pull", ""), ("pull with tombstones", "?cursor=\(PullCursorText.at(version: 0))"), ("filtered", "?collections=habits&limit=1"),
                ("bad limit", "?limit=0"), ("bad cursor", "?cursor=%21"),
            ] {
                let reply = try await TestHTTP.request("GET", server.baseURL + "/v1/sync/pull" + query, headers: ["Authorization": "Bearer \(device.token)"])
                try check("/v1/sync/pull", "get", reply.status, reply.body, label)
            }
            for (label, data, headers) in [
                ("malformed", Data("{".utf8), [String: String]()), ("text", Data("{}".utf8), ["Content-Type": "text/plain"]),
                ("too many", try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": Array(repeating: changes[0], count: 1001)]), [:]),
            ] {
                let reply = try await device.pushRaw(data, headers: headers)
                try check("/v1/sync/push", "post", reply.status, reply.body, label)
            }
            let batch = UUID()
            _ = try await device.push([changes[0]], batchID: batch)
            let conflict = try await device.push([changes[1]], batchID: batch)
            try check("/v1/sync/push", "post", conflict.status, conflict.body, "conflict")
            let anonymous = try await TestHTTP.request("GET", server.baseURL + "/v1/sync/pull")
            try check("/v1/sync/pull", "get", anonymous.status, anonymous.body, "401")
            for path in ["/livez", "/healthz", "/readyz"] {
                let reply = try await server.get(path)
                try check(path, "get", reply.status, reply.body, path)
            }
            // The account endpoints: an export, a bad parameter, the erasure, then what an erased
            // account's token gets.
            let auth = ["Authorization": "Bearer \(device.token)"]
            let export = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: auth)
            try check("/v1/account/export", "get", export.status, export.body, "export")
            let badExport = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export?format=csv", headers: auth)
            try check("/v1/account/export", "get", badExport.status, badExport.body, "export with a parameter")
            let erased = try await TestHTTP.request("DELETE", server.baseURL + "/v1/account", headers: auth)
            try check("/v1/account", "delete", erased.status, erased.body, "erase")
            let gone = try await device.push([changes[0]])
            try check("/v1/sync/push", "post", gone.status, gone.body, "push of an erased account")
            let goneExport = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: auth)
            try check("/v1/account/export", "get", goneExport.status, goneExport.body, "export of an erased account")
            #expect(checked >= 20)
        }
    }
}
