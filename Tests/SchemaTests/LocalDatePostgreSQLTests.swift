import Foundation
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import TestSupport
import Testing

/// `LocalDate` crosses to PostgreSQL as `date` and back unchanged, at the edges of the years a
/// record may hold and beyond; what is not a `LocalDate` (BC, infinity) fails to decode
/// instead of becoming another day.
@Suite struct LocalDatePostgreSQLTests {
    static let edges = ["0001-01-01", "0999-12-31", "1969-12-31", "1970-01-01", "2000-02-29", "2024-02-29", "2026-11-28", "9999-12-31"]
        .compactMap { LocalDate($0) }

    @Test func everyEdgeDateRoundTripsAsDateAndArray() async throws {
        #expect(Self.edges.count == 8)
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                for date in Self.edges {
                    let row = try await connection.query("SELECT \(date) AS d, \(date)::text AS t, \(date) + 1 AS next").single()
                    #expect(try row.decode("d", as: LocalDate.self) == date)
                    #expect(try row.decode("t", as: String.self) == date.description)
                    if date.year < 9999 || date.month < 12 || date.day < 31 {
                        #expect(try row.decode("next", as: LocalDate.self) == date.adding(days: 1))
                    }
                }
                let array = try await connection.query("SELECT \(Self.edges)::date[] AS a").single()
                #expect(try array.decode("a", as: [LocalDate].self) == Self.edges)
            }
        }
    }

    @Test func datesThatAreNoLocalDateDoNotDecode() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                for text in ["0001-12-31 BC", "infinity", "-infinity", "10000-01-01"] {
                    let row = try await connection.query("SELECT \(text)::date AS d").single()
                    #expect(throws: PGError.self, "\(text)") { try row.decode("d", as: LocalDate.self) }
                }
            }
        }
    }
}
