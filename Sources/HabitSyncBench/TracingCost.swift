import Foundation
import ServerHarness

/// What tracing costs a check-in (issue 50, docs/operations.md "Tracing"): the check-in
/// measured on the environment's server, which does not trace, and on a replica on the same
/// database that traces every request (`OTEL_TRACES_SAMPLER=always_on`) and exports over
/// OTLP/HTTP to a `TraceSink`, alternately, `rounds` times each. The replica's CPU includes
/// making, batching, encoding and sending the spans; the sink's is not the server's.
enum TracingCost {
    struct Result {
        var untraced: [CheckInBench.Result] = []
        var traced: [CheckInBench.Result] = []
        /// Exports the sink received, and their bytes.
        var exports = 0
        var bytes = 0
    }

    static func measure(
        _ environment: BenchEnvironment, rounds: Int, log: (String) -> Void, checkIn: (ServerProcess?) async throws -> CheckInBench.Result
    ) async throws -> Result {
        let sink = try await TraceSink.start()
        let replica = try await environment.startReplica(
            name: "traced",
            environment: [
                "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=\(sink.endpoint)", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
                "OTEL_TRACES_SAMPLER=always_on",
            ])
        var result = Result()
        do {
            for round in 0..<rounds {
                log("tracing cost: round \(round + 1) of \(rounds), tracing off…")
                result.untraced.append(try await checkIn(nil))
                log("tracing cost: round \(round + 1) of \(rounds), tracing every request…")
                result.traced.append(try await checkIn(replica))
            }
        } catch {
            await replica.stop()
            await sink.stop()
            throw error
        }
        // Stopped first: the exporter sends its last spans as it stops.
        await replica.stop()
        (result.exports, result.bytes) = sink.received
        await sink.stop()
        return result
    }

    static func table(_ result: Result) -> String {
        let row = CheckInBench.Result.medianRow
        var lines = CheckInBench.Result.roundsHeader
        lines += [row("tracing off", result.untraced), row("tracing every request (always_on, OTLP/HTTP)", result.traced)].compactMap { $0 }
        if let off = CheckInBench.Result.median(result.untraced), let on = CheckInBench.Result.median(result.traced), off.cpu > 0, off.serverCPU > 0 {
            lines.append("")
            lines.append(
                "traced ÷ untraced: CPU per check-in \(String(format: "%.2f", on.cpu / off.cpu))×, the server's \(String(format: "%.2f", on.serverCPU / off.serverCPU))×; "
                    + "the sink received \(result.exports) exports, \(result.bytes / 1024) KiB")
        }
        return lines.joined(separator: "\n")
    }
}
