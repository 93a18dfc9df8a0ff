import Foundation
import LibPQClient
import TestSupport
import Testing

@Suite struct ParameterRoundTripTests {
    static let texts: [String?] = [
        nil, "", "plain", "it's \"quoted\"", "back\\slash", "semi;colon -- not a comment", "$1 $$dollar$$",
        "emoji 🧘‍♀️ and ünïcödé, 日本語", "line\nbreak\ttab", "NULL", "{a,b}", String(repeating: "x", count: 1_048_576),
    ]

    @Test(arguments: texts)
    func textParametersRoundTripExactly(_ value: String?) async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let echoed = try await database.withPool { pool in
            try await pool.withConnection { connection in
                try await connection.query("SELECT \(value)::text AS value, \(value)::text IS NULL AS is_null").single()
            }
        }
        #expect(try echoed.decodeIfPresent("value", as: String.self) == value)
        #expect(try echoed.decode("is_null", as: Bool.self) == (value == nil))
    }

    @Test func arraysWithAwkwardElementsRoundTrip() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let strings = ["a", "", "with,comma", "with \"quote\"", "back\\slash", "{brace}", "NULL", " padded ", "ünï 🧘"]
        let ints = [0, -1, Int.max, Int.min]
        let uuids = [UUID(), UUID()]
        let bools = [true, false]
        let optionals: [String?] = ["x", nil, "NULL"]
        let row = try await database.withPool { pool in
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT \(strings) AS strings, \(ints) AS ints, \(uuids) AS uuids, \(bools) AS bools,
                           cardinality(\(optionals)) AS optional_count, (\(optionals))[2] IS NULL AS second_is_null,
                           (\(optionals))[3] AS third, \([String]()) AS empty
                    """
                ).single()
            }
        }
        #expect(try row.decode("strings", as: [String].self) == strings)
        #expect(try row.decode("ints", as: [Int].self) == ints)
        #expect(try row.decode("uuids", as: [UUID].self) == uuids)
        #expect(try row.decode("bools", as: [Bool].self) == bools)
        #expect(try row.decode("optional_count", as: Int.self) == 3)
        #expect(try row.decode("second_is_null", as: Bool.self))
        #expect(try row.decode("third", as: String.self) == "NULL")
        #expect(try row.decode("empty", as: [String].self) == [])
    }

    @Test func byteaJSONTimestampsAndNumbersRoundTrip() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let bytes = PGBytes(Array(0...255) + [0, 0, 92, 120])
        let json = PGJSON(#"{"name": "Read \"books\"", "n": [1, 2.5, null], "ü": true}"#)
        let instant = Date(timeIntervalSince1970: 1_763_626_530.123456)
        let ancient = Date(timeIntervalSince1970: -2_208_988_800.5)  // 1899-12-31T23:59:59.5Z
        let row = try await database.withPool { pool in
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT \(bytes) AS bytes, octet_length(\(bytes)) AS length, \(json) AS json,
                           (\(json))->>'name' AS name, \(instant) AS instant, \(ancient) AS ancient,
                           \(0.1) AS tenth, \(-1.5e300) AS huge, \(Int32(-7)) AS small
                    """
                ).single()
            }
        }
        #expect(try row.decode("bytes", as: PGBytes.self) == bytes)
        #expect(try row.decode("length", as: Int.self) == 260)
        #expect(try row.decode("name", as: String.self) == #"Read "books""#)
        #expect(try row.decode("json", as: PGJSON.self).text.contains("\"ü\": true"))
        let decodedInstant = try row.decode("instant", as: Date.self)
        #expect(abs(decodedInstant.timeIntervalSince1970 - instant.timeIntervalSince1970) < 0.000_001)
        #expect(try row.decode("ancient", as: Date.self).timeIntervalSince1970 == ancient.timeIntervalSince1970)
        #expect(try row.decode("tenth", as: Double.self) == 0.1)
        #expect(try row.decode("huge", as: Double.self) == -1.5e300)
        #expect(try row.decode("small", as: Int32.self) == -7)
    }

    @Test func oneStatementInsertsAWholeBatchThroughArrays() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let ids = (0..<2000).map { _ in UUID() }
        let names = (0..<2000).map { "row \($0) 'quoted'" }
        let counts = (0..<2000).map { Int32($0) }
        let stored = try await database.withPool { pool in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TABLE items (id uuid PRIMARY KEY, name text, n int)")
                let insert = try await connection.query(
                    """
                    INSERT INTO items (id, name, n)
                    SELECT * FROM unnest(\(ids)::uuid[], \(names)::text[], \(counts)::int4[])
                    """)
                #expect(insert.affectedRows == 2000)
                return try await connection.query("SELECT count(*) AS rows, sum(n) AS total, max(name) FILTER (WHERE n = 7) AS seventh FROM items").single()
            }
        }
        #expect(try stored.decode("rows", as: Int.self) == 2000)
        #expect(try stored.decode("total", as: Int.self) == 1999 * 2000 / 2)
        #expect(try stored.decode("seventh", as: String.self) == "row 7 'quoted'")
    }

    @Test func pipelineSendsStatementsTogetherAndFailsAsOne() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TABLE notes (id int PRIMARY KEY)")
                let results = try await connection.pipeline([
                    "INSERT INTO notes VALUES (\(1))", "INSERT INTO notes VALUES (\(2))", "SELECT count(*) AS n FROM notes",
                ])
                #expect(results.count == 3)
                #expect(try results[2].single().decode("n", as: Int.self) == 2)
                await #expect(throws: PGError.self) {
                    try await connection.pipeline(["INSERT INTO notes VALUES (\(3))", "INSERT INTO notes VALUES (\(1))", "INSERT INTO notes VALUES (\(4))"])
                }
                // The failed pipeline was one implicit transaction: 3 is not there either.
                let count = try await connection.query("SELECT count(*) AS n FROM notes").single().decode("n", as: Int.self)
                #expect(count == 2)
            }
        }
    }
    /// A pipeline prepares each new statement once, in the same round trip, and executes by
    /// name afterwards; a statement the server never prepared (aborted behind a failure) is
    /// not taken for prepared.
    @Test func pipelinePreparesEachStatementOnceAndOnlyWhatRan() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                try await connection.query("CREATE TABLE notes (id int PRIMARY KEY)")
                func preparedCount() async throws -> Int {
                    try await connection.query("SELECT count(*) AS n FROM pg_prepared_statements").single().decode("n", as: Int.self)
                }
                let base = try await preparedCount()
                let batch: [PGQuery] = ["INSERT INTO notes VALUES (\(1))", "INSERT INTO notes VALUES (\(2))", "SELECT count(*) AS n FROM notes"]
                _ = try await connection.pipeline(batch)
                #expect(try await preparedCount() == base + 2, "one insert statement and one select")
                try await connection.query("DELETE FROM notes")
                let again = try await connection.pipeline(batch)
                #expect(try again[2].single().decode("n", as: Int.self) == 2)
                let afterRepeat = try await preparedCount()
                #expect(afterRepeat == base + 3, "the repeat prepared nothing new (the DELETE is the one more)")
                await #expect(throws: PGError.self) {
                    try await connection.pipeline(["INSERT INTO notes VALUES (\(1))", "SELECT \(5)::int + 1 AS m"])
                }
                #expect(try await preparedCount() == afterRepeat, "the statement behind the failure was never prepared")
                let sum = try await connection.pipeline(["SELECT \(5)::int + 1 AS m"])
                #expect(try sum[0].single().decode("m", as: Int.self) == 6)
                #expect(try await preparedCount() == afterRepeat + 1)
            }
        }
    }
}
