import Foundation
import TestSupport
import Testing

@testable import LibPQClient

/// A transaction's body runs on its connection's own queue (issue 46: no hop to the thread pool
/// and back per statement), and transactions that outnumber the connections still all finish.
@Suite struct ConnectionExecutorTests {
    @Test func aTransactionsBodyStaysOnItsConnectionsQueueAcrossStatements() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        let sums = try await database.withPool(size: 3) { pool in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<60 {
                    group.addTask {
                        try await pool.withTransaction { connection in
                            #expect(connection.executor.isCurrent)
                            var total = 0
                            for k in 0..<3 {
                                total += try await connection.query("SELECT \(Int32(n * 10 + k)) AS v").single().decode("v", as: Int.self)
                                #expect(connection.executor.isCurrent, "after a statement the body goes on where it was")
                            }
                            _ = try await connection.pipeline(["SELECT 1", "SELECT 2"])
                            #expect(connection.executor.isCurrent)
                            return total
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(sums.sorted() == (0..<60).map { $0 * 30 + 3 })
    }

    @Test func aConnectionLentWithoutATransactionOrByAVeryLargePoolHopsAsBefore() async throws {
        let database = try await TestPostgres.shared.emptyDatabase()
        try await database.withPool(size: 1) { pool in
            try await pool.withConnection { connection in
                #expect(!connection.executor.isCurrent)
                let value = try await connection.query("SELECT 7 AS v").single().decode("v", as: Int.self)
                #expect(value == 7)
            }
        }
        // More connections than libdispatch has threads for blocked queues: the pool's own threads.
        try await database.withPool(size: ConnectionExecutor.largestPool + 1) { pool in
            try await pool.withTransaction { connection in
                #expect(!connection.executor.isCurrent)
                let value = try await connection.query("SELECT 8 AS v").single().decode("v", as: Int.self)
                #expect(value == 8)
            }
        }
    }
}
