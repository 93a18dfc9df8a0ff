import Foundation
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import TestSupport
import Testing

/// Every time zone a user may choose means the same day boundaries to the server's Swift
/// rules (Foundation) and to the analytics views (PostgreSQL): their UTC offsets agree at
/// instants across the years, winter and summer, not only today when the catalog was read.
@Suite struct TimeZoneParityTests {
    /// The zone a device reports for itself (`Etc/UTC` on a Debian machine, which Foundation's
    /// list of known names leaves out) passes the SDK's own check and the server's: an app that
    /// saves `TimeZone.current.identifier`, as docs/client.md says, is never refused.
    @Test func theDevicesOwnZoneIsAcceptedOnTheDeviceAndByTheServer() async throws {
        let own = TimeZone.current.identifier
        #expect(TimeZoneNames.foundation.contains(own), "\(own)")
        let database = try await TestPostgres.shared.migratedDatabase()
        let names = try await database.withPool(size: 1, role: "habitsync_app") { try await TimeZoneCatalog().names($0) }
        #expect(names.contains(own), "the server does not know \(own)")
    }

    @Test func everyAcceptedZoneHasTheSameOffsetInSwiftAndPostgreSQL() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1, role: "habitsync_app") { pool in
            let names = try await TimeZoneCatalog().names(pool).names.sorted()
            #expect(names.count > 300, "the catalog holds the IANA zones")
            #expect(names.contains("Europe/Berlin") && names.contains("UTC") && !names.contains("UTC+5"))
            let instants = ["2000-01-15T12:00:00Z", "2013-07-15T12:00:00Z", "2026-01-15T12:00:00Z", "2026-07-15T12:00:00Z"]
            let rows = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT z AS name, i AS instant,
                           extract(epoch FROM (i::timestamptz AT TIME ZONE z) - (i::timestamptz AT TIME ZONE 'UTC'))::int8 AS offset_seconds
                    FROM unnest(\(names)::text[]) AS z, unnest(\(instants)::text[]) AS i
                    """
                ).rows
            }
            var disagreements: [String] = []
            for row in rows {
                let name = try row.decode("name", as: String.self)
                let instant = try row.decode("instant", as: String.self)
                guard let zone = TimeZone(identifier: name), let date = WireTime.parse(instant) else {
                    disagreements.append("\(name): unknown to Foundation")
                    continue
                }
                let postgres = try row.decode("offset_seconds", as: Int64.self)
                if Int64(zone.secondsFromGMT(for: date)) != postgres {
                    disagreements.append("\(name) at \(instant): Foundation \(zone.secondsFromGMT(for: date)) s, PostgreSQL \(postgres) s")
                }
            }
            #expect(rows.count == names.count * instants.count)
            #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
        }
    }
}
