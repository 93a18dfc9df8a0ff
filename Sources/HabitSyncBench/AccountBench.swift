import Foundation
import ServerHarness

/// The account measurements (`habitsync-bench --account`): exporting a small and a large
/// account, and the server's peak memory after each (an export is streamed, so the large one
/// must not raise it with its size), then erasing the large one.
enum AccountBench {
    struct Export: Codable {
        var records = 0
        var bytes = 0
        var seconds = 0.0
        /// The server's peak RSS (VmHWM) once this export is done.
        var serverPeakMiB = 0.0
    }

    struct Result: Codable {
        var serverPeakBeforeMiB = 0.0
        var small = Export()
        var large = Export()
        var eraseSeconds = 0.0
        var erasedRows = 0
    }

    static func measure(_ environment: BenchEnvironment, small: Int, large: Int, log: (String) -> Void) async throws -> Result {
        var result = Result()
        log("seeding accounts of \(small) and \(large) usage events…")
        for (user, count) in [("export-small", small), ("export-large", large)] {
            try await Workloads.seedUsageEvents(environment.database.pool, tenant: environment.database.tenant, user: user, count: count)
        }
        let tokens = (small: try await environment.database.token(user: "export-small"), large: try await environment.database.token(user: "export-large"))
        let port = environment.server.port
        result.serverPeakBeforeMiB = environment.server.peakRSSMiB()
        for (label, token, count) in [("small", tokens.small, small), ("large", tokens.large, large)] {
            log("exporting the \(label) account…")
            let (status, bytes, seconds) = try await onOwnThread { () -> (Int, Int, Double) in
                let connection = try PlainHTTPConnection(port: port)
                let started = ContinuousClock.now
                let (status, bytes) = try connection.streamed("GET", "/v1/account/export", headers: ["Authorization": "Bearer \(token)"])
                return (status, bytes, Double((ContinuousClock.now - started) / .microseconds(1)) / 1e6)
            }
            guard status == 200 else { throw BenchError("export answered \(status)") }
            let export = Export(records: count, bytes: bytes, seconds: seconds, serverPeakMiB: environment.server.peakRSSMiB())
            if label == "small" { result.small = export } else { result.large = export }
        }
        log("erasing the large account…")
        let (status, body, seconds) = try await onOwnThread { () -> (Int, Data, Double) in
            let connection = try PlainHTTPConnection(port: port)
            let started = ContinuousClock.now
            let reply = try connection.delete("/v1/account", headers: ["Authorization": "Bearer \(tokens.large)"])
            return (reply.status, reply.body, Double((ContinuousClock.now - started) / .microseconds(1)) / 1e6)
        }
        guard status == 200 else { throw BenchError("erase answered \(status)") }
        result.eraseSeconds = seconds
        result.erasedRows = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["total"] as? Int ?? 0
        return result
    }

    static func table(_ r: Result) -> String {
        func row(_ label: String, _ e: Export) -> String {
            String(
                format: "| export, %@ (%d usage events) | %.2f s, %.0f records/s, %.1f MiB | %.1f |", label, e.records, e.seconds,
                Double(e.records) / max(e.seconds, 0.000_001), Double(e.bytes) / 1_048_576, e.serverPeakMiB)
        }
        return """
            | account | time, rate, size | server peak RSS, MiB |
            |---|---|---|
            | before (fresh server) | | \(String(format: "%.1f", r.serverPeakBeforeMiB)) |
            \(row("small", r.small))
            \(row("large", r.large))
            | peak RSS growth from the small to the \(r.large.records / max(r.small.records, 1))× larger export | | \(String(format: "%+.1f", r.large.serverPeakMiB - r.small.serverPeakMiB)) |
            | DELETE /v1/account of the large one | \(String(format: "%.2f s, %d rows", r.eraseSeconds, r.erasedRows)) | |
            """
    }
}
