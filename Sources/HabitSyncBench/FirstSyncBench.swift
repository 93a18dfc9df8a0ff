import Foundation
import HabitSyncDomain
import ServerHarness

/// Issue 49: how long a new phone of a ten-year user waits before it holds its main screen
/// (the first sync's `recent` phase), against the whole history. A user of ten daily habits
/// done every day for ten years and one usage event a day, pulled from scratch in pages of
/// 500 (the SDK's) over one connection, as a device does; each round is a new device.
enum FirstSyncBench {
    struct Result: Codable {
        var records = 0
        var pages = 0
        var megabytes = 0.0
        /// Until the first page that says the main screen is held (its phase is past `recent`).
        var mainScreenMilliseconds: [Double] = []
        var mainScreenPages = 0
        var mainScreenMegabytes = 0.0
        var wholeMilliseconds: [Double] = []
    }

    static let days = 3650

    static func measure(_ environment: BenchEnvironment, rounds: Int, log: (String) -> Void) async throws -> Result {
        let user = "ten-year-veteran"
        log("seeding ten years of ten daily habits…")
        _ = try await HistoryScale.seed(environment.database.pool, tenant: environment.database.tenant, user: user, days: days)
        log("pushing a usage event a day for ten years…")
        let phone = try await environment.client(user: user, device: "old-phone")
        let today = LocalDate(Date(), in: .gmt)
        for start in stride(from: 0, to: days, by: 500) {
            let changes: [[String: Any]] = (start..<min(start + 500, days)).map { back in
                let noon = Date(timeIntervalSince1970: Double(today.adding(days: -back).dayNumber) * 86_400 + 43_200)
                return [
                    "collection": "usageEvents", "op": "upsert", "id": UUID().uuidString, "updatedAt": WireTime.format(noon),
                    "record": ["eventType": "exit_to_focus", "timestamp": WireTime.format(min(noon, Date())), "pauseDuration": 5, "timerDuration": 30],
                ]
            }
            let status = try await phone.push(try JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])).status
            guard status == 200 else { throw BenchError("seeding push answered \(status)") }
        }
        var result = Result()
        let clock = ContinuousClock()
        for round in 0..<rounds {
            log("first sync \(round + 1) of \(rounds)…")
            let device = try await environment.puller(user: user)
            let started = clock.now
            var cursor: String?
            var records = 0, pages = 0, bytes = 0
            var mainScreen: Double?
            while true {
                let page = try device.page(cursor: cursor, limit: 500)
                records += page.changes
                pages += 1
                bytes += page.bytes
                cursor = page.cursor
                if mainScreen == nil, page.phase != "recent" {
                    mainScreen = (clock.now - started) / .milliseconds(1)
                    result.mainScreenPages = pages
                    result.mainScreenMegabytes = Double(bytes) / 1_000_000
                }
                if !page.hasMore { break }
            }
            result.wholeMilliseconds.append((clock.now - started) / .milliseconds(1))
            result.mainScreenMilliseconds.append(mainScreen ?? .nan)
            (result.records, result.pages, result.megabytes) = (records, pages, Double(bytes) / 1_000_000)
        }
        return result
    }

    static func table(_ result: Result) -> String {
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let main = median(result.mainScreenMilliseconds), whole = median(result.wholeMilliseconds)
        return """
            | first sync of a ten-year user (\(result.records) records, \(result.pages) pages, \(String(format: "%.1f", result.megabytes)) MB), median of \(result.wholeMilliseconds.count) | ms | pages | MB |
            |---|---|---|---|
            | until the main screen is held (phase past `recent`) | \(String(format: "%.0f", main)) | \(result.mainScreenPages) | \(String(format: "%.2f", result.mainScreenMegabytes)) |
            | the whole history | \(String(format: "%.0f", whole)) | \(result.pages) | \(String(format: "%.1f", result.megabytes)) |
            | main screen / whole | \(String(format: "%.1f %%", 100 * main / whole)) | | |
            """
    }
}
