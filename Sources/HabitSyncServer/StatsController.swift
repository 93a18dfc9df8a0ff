import Foundation
import HTTPTypes
import HabitSyncDomain
import HabitSyncStore
import Hummingbird
import NIOCore

/// `GET /v1/stats/habits?from=&to=`, `/v1/stats/focus`, `/v1/stats/usage` for the caller.
struct StatsController: Sendable {
    let stats: StatsStore
    let limiter: ExpensiveReadLimiter

    func addRoutes(to group: RouterGroup<AuthenticatedRequestContext>) {
        group.get("stats/habits") { request, context in
            let identity = context.identity
            let query = request.uri.queryParameters
            for (name, _) in query where name != "from" && name != "to" {
                throw APIError.unknownParameter(name, accepted: "from, to")
            }
            func date(_ name: String) throws -> LocalDate? {
                guard let text = query[Substring(name)] else { return nil }
                let years = LocalDate.queryYears
                guard let date = LocalDate(String(text), years: years) else {
                    throw APIError(
                        .invalidParameter,
                        "\(name) must be a date yyyy-MM-dd in years \(years.lowerBound)–\(years.upperBound), not '\(TextRules.quoted(String(text)))'", field: name)
                }
                return date
            }
            let to: LocalDate
            if let end = try date("to") { to = end } else { to = try await stats.today(identity) }
            let from = try date("from") ?? to.adding(days: -29)
            guard from <= to, to.dayNumber - from.dayNumber <= 3660 else {
                throw APIError(.invalidParameter, "from must not be after to, and the range at most 10 years", field: "from")
            }
            return Self.json(try await limiter.run(identity, kind: "stats") { try await stats.habitStats(identity, from: from, to: to) })
        }
        group.get("stats/focus") { _, context in
            let identity = context.identity
            return Self.json(try await limiter.run(identity, kind: "stats") { try await stats.focusStats(identity) })
        }
        group.get("stats/usage") { _, context in
            let identity = context.identity
            return Self.json(try await limiter.run(identity, kind: "stats") { try await stats.usageStats(identity) })
        }
    }

    /// PostgreSQL's `json_build_object` writes `"key" : value`; every response of the API is
    /// compact JSON, so the statistics are written again (keys sorted) before they are sent.
    static func json(_ text: String) -> Response {
        let compact = (try? JSONParser.parse(bytes: Array(text.utf8)))?.jsonText ?? text
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: compact)))
    }
}
