import Foundation
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import ServerHarness
import SyncTestSupport
import TestSupport
import Testing

/// Issue 25, item 5: an export says whether it is whole. Before, five exports racing the
/// account's erasure each answered 200 with well-formed JSON holding 11,000 of 30,000 changes.
@Suite struct ExportCompletenessTests {
    static func fill(_ device: SyncClient, events: Int) async throws {
        for start in stride(from: 0, to: events, by: 1000) {
            let changes = (start..<min(events, start + 1000)).map { _ in Wire.change("usageEvents", UUID(), at: Wire.at(0), record: Wire.usageEvent()) }
            #expect(try await device.push(changes).status == 200)
        }
    }

    /// The erasure commits between two pages of the export: the export stops and never writes
    /// its trailer. Deterministic: the erasure runs inside the export's own writer.
    @Test func anExportThatMeetsAnErasureStopsWithoutItsTrailer() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in try await Self.fill(try await world.client(server, user: "bob"), events: 25) }
        try await world.database.withPool(size: 3) { pool in
            let accounts = AccountStore(pool: pool, statementTimeout: .seconds(120), exportPageSize: 10)
            var text = ""
            var erased = false
            await #expect(throws: StoreError.erasedAccount) {
                try await accounts.export(tenant: world.tenant, user: "bob") { piece in
                    text += piece
                    // After the first page of changes, the account is erased.
                    if !erased, text.contains("usageEvents") {
                        erased = true
                        _ = try await accounts.eraseUser(tenant: world.tenant, user: "bob")
                    }
                }
            }
            #expect(erased)
            #expect(!text.contains("\"complete\""), "a cut-short export ended with a trailer: \(text.suffix(200))")
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) == nil, "a cut-short export parsed as a whole document")
        }
    }

    @Test func aWholeExportEndsWithCountsThatMatchItsSections() async throws {
        let world = try await SyncWorld.make()
        try await world.serve { server in
            let bob = try await world.client(server, user: "bob")
            try await Self.fill(bob, events: 30)
            let download = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: ["Authorization": "Bearer \(bob.token)"])
            #expect(download.status == 200)
            let document = try download.json()
            #expect(document["complete"] as? Bool == true)
            let counts = try #require(document["counts"] as? [String: Int])
            #expect(Set(counts.keys) == ["changes", "conflicts", "legacyImports", "dataMigrations", "devices", "pushBatches"])
            for (section, count) in counts { #expect((document[section] as? [Any])?.count == count, "\(section)") }
            #expect(counts["changes"] ?? 0 >= 30)
        }
    }

    /// Exports racing an erasure through the API: each is either whole (it was read before
    /// the erasure), or refused (410), or visibly cut short — never a document that says it is
    /// complete and holds less than the account had.
    @Test func exportsRacingAnErasureAreWholeOrVisiblyIncomplete() async throws {
        let world = try await SyncWorld.make()
        var configuration = ServerConfiguration.forTests
        configuration.expensiveReadsPerUser = 10
        try await world.serve(configuration) { server in
            let bob = try await world.client(server, user: "bob")
            try await Self.fill(bob, events: 3000)
            let whole = try await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: ["Authorization": "Bearer \(bob.token)"])
            let wholeCount = try #require(try whole.json()["counts"] as? [String: Int])["changes"] ?? 0
            let exports = (0..<5).map { _ in
                Task { try? await TestHTTP.request("GET", server.baseURL + "/v1/account/export", headers: ["Authorization": "Bearer \(bob.token)"]) }
            }
            let erased = try await TestHTTP.request("DELETE", server.baseURL + "/v1/account", headers: ["Authorization": "Bearer \(bob.token)"])
            #expect(erased.status == 200)
            for export in exports {
                guard let reply = await export.value else { continue }  // cut off mid-transfer: visibly incomplete
                if reply.status == 410 { continue }
                #expect(reply.status == 200)
                guard let document = try? reply.json(), document["complete"] as? Bool == true else { continue }
                #expect((document["changes"] as? [Any])?.count == wholeCount, "a document marked complete holds part of the account")
            }
        }
    }
}
