import Foundation
import HabitSyncStore
import ServerHarness

/// What a webhook costs a check-in (issue 51, docs/operations.md "Webhooks"): the check-in on
/// the run's server with the tenant holding no endpoint, with one endpoint that hears every
/// collection (a `TraceSink` on loopback that answers 200 at once), and with one whose
/// receiver is down, in turn, `rounds` times each. With the endpoint, each push writes its delivery in its own
/// transaction and the server's deliverer sends it: both are in the CPU measured.
enum WebhookCost {
    struct Result {
        var without: [CheckInBench.Result] = []
        var with: [CheckInBench.Result] = []
        /// With an endpoint whose receiver refuses every connection: deliveries pile up.
        var receiverDown: [CheckInBench.Result] = []
        /// Deliveries the sink received, and their bytes.
        var delivered = 0
        var bytes = 0
    }

    static func measure(_ environment: BenchEnvironment, rounds: Int, log: (String) -> Void, checkIn: () async throws -> CheckInBench.Result) async throws -> Result {
        let sink = try await TraceSink.start()
        defer { Task { await sink.stop() } }
        let store = WebhookStore(pool: environment.database.pool)
        let secret = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let request = try WebhookEndpointRequest(url: "http://127.0.0.1:\(sink.port)/hook", collections: nil, includeRecords: false, secret: secret)
        // Port 9 (discard) on loopback: nothing listens, every connection is refused.
        let down = try WebhookEndpointRequest(url: "http://127.0.0.1:9/hook", collections: nil, includeRecords: false, secret: secret)
        var result = Result()
        for round in 0..<rounds {
            log("webhook cost: round \(round + 1) of \(rounds), no endpoint…")
            result.without.append(try await checkIn())
            log("webhook cost: round \(round + 1) of \(rounds), one endpoint hearing every push…")
            let endpoint = try await store.addEndpoint(tenant: environment.database.tenant, request)
            result.with.append(try await checkIn())
            // Its deliveries go with it (those still pending too).
            _ = try await store.removeEndpoint(tenant: environment.database.tenant, endpoint: endpoint)
            log("webhook cost: round \(round + 1) of \(rounds), one endpoint whose receiver is down…")
            let dead = try await store.addEndpoint(tenant: environment.database.tenant, down)
            result.receiverDown.append(try await checkIn())
            _ = try await store.removeEndpoint(tenant: environment.database.tenant, endpoint: dead)
        }
        (result.delivered, result.bytes) = sink.received
        return result
    }

    static func table(_ result: Result) -> String {
        let row = CheckInBench.Result.medianRow
        var lines = CheckInBench.Result.roundsHeader
        lines += [
            row("no webhook", result.without), row("a webhook hearing every push (written and delivered)", result.with),
            row("a webhook whose receiver is down (written, failing, piling up)", result.receiverDown),
        ].compactMap { $0 }
        if let off = CheckInBench.Result.median(result.without), let on = CheckInBench.Result.median(result.with), off.cpu > 0, off.serverCPU > 0, off.postgresCPU > 0 {
            lines.append("")
            lines.append(
                "with ÷ without: CPU per check-in \(String(format: "%.2f", on.cpu / off.cpu))×, the server's \(String(format: "%.2f", on.serverCPU / off.serverCPU))×, "
                    + "PostgreSQL's \(String(format: "%.2f", on.postgresCPU / off.postgresCPU))×; the sink received \(result.delivered) deliveries, \(result.bytes / 1024) KiB")
            if let down = CheckInBench.Result.median(result.receiverDown) {
                lines.append(
                    "receiver down ÷ no webhook: CPU per check-in \(String(format: "%.2f", down.cpu / off.cpu))×, p99 \(String(format: "%.2f", down.latencyMilliseconds.p99 / max(off.latencyMilliseconds.p99, 0.001)))×"
                )
            }
        }
        return lines.joined(separator: "\n")
    }
}
