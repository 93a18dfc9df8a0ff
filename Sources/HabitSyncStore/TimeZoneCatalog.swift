import Foundation
import HabitSyncDomain
import LibPQClient
import Synchronization

/// The time zone names users may choose, read once from the database: those PostgreSQL knows
/// (`pg_timezone_names`) whose UTC offset Foundation agrees with right now, so that a zone
/// means the same day boundaries in the server's Swift rules and in the analytics views.
/// (`UTC+5` is not among them: Foundation reads it as UTC+05:00, PostgreSQL as POSIX UTC−05:00.)
public final class TimeZoneCatalog: Sendable {
    private let cached = Mutex<TimeZoneNames?>(nil)

    public init() {}

    static let query: PGQuery = "SELECT name, extract(epoch FROM utc_offset)::int8 AS offset_seconds FROM pg_timezone_names"

    public func names(_ pool: PGPool) async throws -> TimeZoneNames {
        if let names = cached.withLock({ $0 }) { return names }
        let now = Date()
        let rows = try await pool.withConnection { try await $0.query(Self.query).rows }
        var agreed: [String] = []
        for row in rows {
            let name = try row.decode("name", as: String.self)
            let offset = try row.decode("offset_seconds", as: Int64.self)
            guard let zone = TimeZone(identifier: name), Int64(zone.secondsFromGMT(for: now)) == offset else { continue }
            agreed.append(name)
        }
        let names = TimeZoneNames(agreed)
        cached.withLock { $0 = names }
        return names
    }
}
