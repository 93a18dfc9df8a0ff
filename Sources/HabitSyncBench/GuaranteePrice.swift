import Foundation
import LibPQClient

/// What a guarantee costs a check-in (issue 46: "where a guarantee truly costs, its price as a
/// measured row, with and without"): the check-in measured again on the same cluster with the
/// guarantee's database work switched off, then switched back on. A measurement only: with a
/// guarantee off the bench's database no longer keeps it (digests drift, streak summaries go
/// stale), which is why this runs on the bench's own throwaway data and nowhere else.
struct GuaranteePrice: Sendable {
    /// What the device developer or analyst would lose without it.
    let name: String
    /// The triggers (by name prefix) that keep it.
    let triggerPrefixes: [String]
    /// Functions replaced by a no-op body while it is off (restored from their own definition).
    let noOpFunctions: [String]

    static let recordDigests = GuaranteePrice(name: "record digests (triggers)", triggerPrefixes: ["record_digest_"], noOpFunctions: [])
    static let streakMonths = GuaranteePrice(
        name: "streak month summaries (triggers)", triggerPrefixes: ["progress_months_", "habit_months_"], noOpFunctions: [])
    static let exitRuns = GuaranteePrice(name: "usage streak's exit runs (triggers)", triggerPrefixes: ["exit_runs_"], noOpFunctions: [])
    static let erasureCheck = GuaranteePrice(
        name: "the erased-account check after the lock", triggerPrefixes: [], noOpFunctions: ["habitsync_assert_not_erased(uuid, text)"])
    static let each: [GuaranteePrice] = [recordDigests, streakMonths, exitRuns, erasureCheck]
    static let all = GuaranteePrice(
        name: "all four", triggerPrefixes: each.flatMap(\.triggerPrefixes), noOpFunctions: each.flatMap(\.noOpFunctions))

    /// The check-in (`measure`) with every guarantee, then without each and without all, for
    /// `rounds` rounds: alternating, so that drift of the machine or of the tables lands on
    /// every row alike; each row holds its rounds (its figure is their median).
    static func rows(
        rounds: Int, pool: PGPool, log: (String) -> Void, measure: () async throws -> CheckInBench.Result
    ) async throws -> [Row] {
        let priced = each + [all]
        var samples: [String: [CheckInBench.Result]] = [:]
        for round in 1...max(1, rounds) {
            log("prices, round \(round) of \(rounds): check-in with every guarantee…")
            samples[kept, default: []].append(try await measure())
            for guarantee in priced {
                log("prices, round \(round) of \(rounds): check-in without \(guarantee.name)…")
                samples[guarantee.name, default: []].append(try await guarantee.withOff(pool, measure))
            }
        }
        return ([kept] + priced.map(\.name)).map { Row(without: $0, samples: samples[$0] ?? []) }
    }

    /// Runs `body` with the guarantee off, and turns it on again whatever `body` did.
    func withOff<T>(_ pool: PGPool, _ body: () async throws -> T) async throws -> T {
        let definitions = try await pool.withConnection { connection in
            var definitions: [String] = []
            for function in noOpFunctions {
                let row = try await connection.query(
                    """
                    SELECT pg_get_functiondef(\(function)::regprocedure) AS definition,
                           format('CREATE OR REPLACE FUNCTION %s(%s) RETURNS void LANGUAGE sql AS $$ SELECT $$', p.oid::regproc,
                                  pg_get_function_arguments(p.oid)) AS no_op
                    FROM pg_proc p WHERE p.oid = \(function)::regprocedure
                    """
                ).single()
                definitions.append(try row.decode("definition", as: String.self))
                // Every function priced here returns void; its callers' statement stays (a call
                // that does nothing), which is what is left of the guarantee without its work.
                try await connection.simpleQuery(unsafeSQL: try row.decode("no_op", as: String.self))
            }
            try await switchTriggers(connection, enable: false)
            return definitions
        }
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        try await pool.withConnection { connection in
            try await switchTriggers(connection, enable: true)
            for definition in definitions { try await connection.simpleQuery(unsafeSQL: definition) }
            // The next measurement assumes every guarantee is back: checked, not trusted.
            let off = try await connection.query(
                "SELECT count(*) AS n FROM pg_trigger WHERE tgenabled = 'D' AND tgname LIKE ANY (\(patterns)::text[])"
            ).single().decode("n", as: Int.self)
            for (function, definition) in zip(noOpFunctions, definitions) {
                let now = try await connection.query("SELECT pg_get_functiondef(\(function)::regprocedure) AS definition").single()
                guard try now.decode("definition", as: String.self) == definition else { throw BenchError("\(function) was not restored") }
            }
            guard off == 0 else { throw BenchError("\(off) triggers of \(name) are still disabled") }
        }
        return try result.get()
    }

    /// `LIKE` patterns of the guarantee's triggers.
    private var patterns: [String] { triggerPrefixes.map { $0 + "%" } }

    private func switchTriggers(_ connection: PGConnection, enable: Bool) async throws {
        guard !triggerPrefixes.isEmpty else { return }
        // Triggers cloned onto partitions follow their parent's (tgparentid).
        let triggers = try await connection.query(
            """
            SELECT format('ALTER TABLE %s %s TRIGGER %I', tgrelid::regclass, \(enable ? "ENABLE" : "DISABLE"), tgname) AS command
            FROM pg_trigger WHERE NOT tgisinternal AND tgparentid = 0 AND tgname LIKE ANY (\(patterns)::text[])
            """)
        for row in triggers.rows { try await connection.simpleQuery(unsafeSQL: try row.decode("command", as: String.self)) }
    }

    /// The row of the check-in with every guarantee kept, which the others are compared with.
    static let kept = "(every guarantee kept)"

    /// One row of the price table: the median of its rounds (by CPU per check-in).
    struct Row: Codable {
        let without: String
        let samples: [CheckInBench.Result]

        var median: CheckInBench.Result? { CheckInBench.Result.median(samples) }
    }

    /// The check-in's price table: with every guarantee, then without each, then without all,
    /// each row the median of its rounds, its price the CPU it saves against the first row.
    static func table(_ rows: [Row]) -> String {
        func ms(_ value: Double) -> String { String(format: "%.2f", value) }
        let with = rows.first?.median?.cpu ?? 0
        let lines = rows.compactMap { row -> String? in
            guard let r = row.median else { return nil }
            let saved = with - r.cpu
            let spread = row.samples.map { ms($0.cpu) }.joined(separator: " / ")
            return
                "| \(row.without) | \(String(format: "%.0f", r.perSecond)) | \(ms(r.serverCPU)) | \(ms(r.postgresCPU)) | \(ms(r.cpu)) (\(spread)) | \(ms(saved)) (\(String(format: "%.0f", with > 0 ? saved / with * 100 : 0)) %) |"
        }
        return (["| check-in without | per second | server ms | PostgreSQL ms | CPU ms: median (rounds) | price (CPU saved) |", "|---|---|---|---|---|---|"] + lines)
            .joined(separator: "\n")
    }
}
