import Foundation
import ServerHarness

/// Peak RSS of a server taking 16 concurrent maximum-size pushes (issue 9): bodies whose JSON
/// would become millions of values, and bodies of 1000 valid changes of 8 KiB each. The
/// parser's limits and the decoding budget keep the peak bounded; the figures go into
/// BENCHMARKS.md and the Kubernetes memory limit.
enum HostileMemory {
    struct Result: Codable {
        var idlePeakMiB = 0.0
        var afterHugeTreesPeakMiB = 0.0
        var afterLargeValidBatchesPeakMiB = 0.0
        var statuses: [String: Int] = [:]
    }

    static func measure(_ environment: BenchEnvironment, concurrency: Int = 16, bodyBytes: Int = 8 * 1024 * 1024) async throws -> Result {
        var result = Result()
        let warm = try await environment.client(user: "memory-warm", device: "warm")
        _ = try await warm.push(body([change(0, description: "warm")]))
        result.idlePeakMiB = environment.server.peakRSSMiB()

        // One record holding ~4 million zeros: refused by the parser's limits.
        let zeros = String(repeating: "0,", count: bodyBytes / 2 - 200) + "0"
        let huge = Data(
            #"{"batchId":"\#(UUID().uuidString)","changes":[{"collection":"habits","op":"upsert","id":"\#(UUID().uuidString)","updatedAt":"2026-11-20T08:15:30Z","record":{"name":[\#(zeros)]}}]}"#.utf8
        )
        let hugeStatuses = try await concurrently(environment, concurrency, user: "memory-huge") { _ in huge }
        for (status, count) in hugeStatuses { result.statuses["huge \(status)", default: 0] += count }
        result.afterHugeTreesPeakMiB = environment.server.peakRSSMiB()

        // 1000 valid habits whose descriptions are 1,950 four-byte characters: just under the
        // body limit. Each device retries a 503 until its batch is stored.
        let description = String(repeating: "🏃", count: min(1950, max(1, bodyBytes / 4300)))
        let validStatuses = try await concurrently(environment, concurrency, user: "memory-valid", retryingBusy: true) { _ in
            body((0..<1000).map { change($0, description: description) })
        }
        for (status, count) in validStatuses { result.statuses["valid \(status)", default: 0] += count }
        result.afterLargeValidBatchesPeakMiB = environment.server.peakRSSMiB()
        return result
    }

    static func change(_ index: Int, description: String) -> [String: Any] {
        let record: [String: Any] = [
            "name": "Habit \(index)", "habitType": "formation", "goalCount": 1, "goalUnit": "times",
            "schedule": ["type": "daily"], "startDate": "2026-11-01", "habitDescription": description,
        ]
        return ["collection": "habits", "op": "upsert", "id": UUID().uuidString, "updatedAt": "2026-11-20T08:15:30Z", "record": record]
    }

    static func body(_ changes: [[String: Any]]) -> Data {
        (try? JSONSerialization.data(withJSONObject: ["batchId": UUID().uuidString, "changes": changes])) ?? Data()
    }

    /// `concurrency` devices (one user each) push their body at the same moment; with
    /// `retryingBusy`, each retries a 503 (up to 600 times, 50 ms apart) and counts its last answer.
    static func concurrently(_ environment: BenchEnvironment, _ concurrency: Int, user: String, retryingBusy: Bool = false, _ makeBody: (Int) -> Data) async throws -> [Int: Int] {
        let bodies = (0..<concurrency).map(makeBody)
        var clients: [DeviceClient] = []
        for index in 0..<concurrency { clients.append(try await environment.client(user: "\(user)-\(index)", device: "d")) }
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for (client, body) in zip(clients, bodies) {
                group.addTask {
                    var status = try await client.push(body).status
                    var attempts = 1
                    while retryingBusy, status == 503, attempts < 600 {
                        try await Task.sleep(for: .milliseconds(50))
                        status = try await client.push(body).status
                        attempts += 1
                    }
                    return status
                }
            }
            var statuses: [Int: Int] = [:]
            for try await status in group { statuses[status, default: 0] += 1 }
            return statuses
        }
    }
}
