import Foundation
import HabitSyncDomain
import LibPQClient
import TestSupport
import Testing

@testable import HabitSyncStore

/// The reminder cascade renders a stored key's time from immutable parts (Citus refuses
/// `to_char` of a column in a data-modifying statement); it must write what
/// `habitsync_wire_time` and the Swift wire format write, at every edge.
@Suite struct WireTimeImmutableParityTests {
    @Test func theImmutableRenderingIsTheWireTimeAtEveryEdge() async throws {
        var times = [
            "0001-01-01T00:00:00.000Z", "0001-12-31T23:59:59.999Z", "0999-06-15T12:30:45.001Z", "1970-01-01T00:00:00.000Z",
            "2024-02-29T23:59:59.999Z", "2026-11-20T08:15:30.123Z", "2026-12-31T23:59:59.990Z", "9999-12-31T23:59:59.999Z",
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let milliseconds = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &generator)
            times.append(WireTime.format(Date(timeIntervalSince1970: Double(milliseconds) / 1000)))
        }
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let rows = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT t.text AS sent, habitsync_wire_time(t.at) AS stable, \(PushBatch.wireTimeImmutable("t.at")) AS immutable
                    FROM (SELECT x AS text, x::timestamptz(3) AS at FROM unnest(\(times)::text[]) AS x) t
                    """
                ).rows
            }
            #expect(rows.count == times.count)
            for row in rows {
                let sent = try row.decode("sent", as: String.self)
                let stable = try row.decode("stable", as: String.self)
                #expect(try row.decode("immutable", as: String.self) == stable, "\(sent)")
                #expect(stable == sent, "\(sent)")
            }
        }
    }

    @Test func aDeviceIdInsideTheBuiltKeyIsWhatToJSONWrites() async throws {
        let devices = ["phone", "we\"ird", "back\\slash", "\\\"", "café", "e\u{301}", "😀 watch", "'quoted'", String(repeating: "x", count: 100)]
        let database = try await TestPostgres.shared.migratedDatabase()
        try await database.withPool(size: 1) { pool in
            let rows = try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT d AS device, ('"' || \(PushBatch.jsonStringBody("d")) || '"')::jsonb #>> '{}' AS read_back,
                           ('"' || \(PushBatch.jsonStringBody("d")) || '"')::jsonb = to_jsonb(d) AS same
                    FROM unnest(\(devices)::text[]) AS d
                    """
                ).rows
            }
            #expect(rows.count == devices.count)
            for row in rows {
                let device = try row.decode("device", as: String.self)
                #expect(try row.decode("read_back", as: String.self) == device)
                #expect(try row.decode("same", as: Bool.self), "\(device)")
            }
        }
    }
}
