import Foundation
import HabitSyncDomain
import LibPQClient
import Synchronization

/// The time zone names users may choose, read once from the database: those PostgreSQL knows
/// (`pg_timezone_names`) whose UTC offsets Foundation agrees with — at several instants,
/// winter and summer, now and in past years — so that a zone means the same day boundaries
/// in the server's Swift rules and in the analytics views. (`UTC+5` is not among them:
/// Foundation reads it as UTC+05:00, PostgreSQL as POSIX UTC−05:00. Nor is `CET`: `AT TIME
/// ZONE 'CET'` takes it as the fixed abbreviation, with no summer time.)
public final class TimeZoneCatalog: Sendable {
    /// The one reading of the names, shared: concurrent first callers (the first pushes after a
    /// start) wait for it rather than each doing the work again; a failed reading is forgotten.
    private let reading = Mutex<Task<TimeZoneNames, any Error>?>(nil)

    public init() {}

    /// The offsets the analytics views would use (`AT TIME ZONE`), per name and instant.
    static func offsets(at instants: [Date]) -> PGQuery {
        """
        SELECT n.name, i.instant, extract(epoch FROM (i.instant AT TIME ZONE n.name) - (i.instant AT TIME ZONE 'UTC'))::int8 AS offset_seconds
        FROM pg_timezone_names n, unnest(\(instants)::timestamptz[]) AS i(instant)
        ORDER BY n.name
        """
    }

    public func names(_ pool: PGPool) async throws -> TimeZoneNames {
        let task = reading.withLock { reading in
            if let reading { return reading }
            let task = Task { try await Self.read(pool) }
            reading = task
            return task
        }
        do {
            return try await task.value
        } catch {
            reading.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }

    private static func read(_ pool: PGPool) async throws -> TimeZoneNames {
        let now = Date()
        let instants = [now, now.addingTimeInterval(182 * 86_400), Date(timeIntervalSince1970: 948_000_000), Date(timeIntervalSince1970: 1_373_000_000)]
        let rows = try await pool.withConnection { try await $0.query(Self.offsets(at: instants)).rows }
        var agreeing: [String: Bool] = [:]
        // Rows come by name: each zone is built once, not once per instant (Foundation loads its
        // rules from disk, the bulk of the cost).
        var zone: (name: String, value: TimeZone?)?
        for row in rows {
            let name = try row.decode("name", as: String.self)
            let instant = try row.decode("instant", as: Date.self)
            let offset = try row.decode("offset_seconds", as: Int64.self)
            if zone?.name != name { zone = (name, TimeZone(identifier: name)) }
            let same = zone?.value.map { Int64($0.secondsFromGMT(for: instant)) == offset } ?? false
            agreeing[name] = (agreeing[name] ?? true) && same
        }
        return TimeZoneNames(agreeing.filter(\.value).keys)
    }
}
