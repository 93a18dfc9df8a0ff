import Foundation
import HabitSyncDomain
import LibPQClient

/// The slow path of a batch that PostgreSQL refused data of (SQLSTATE class 22, 23 or 54):
/// a refusal must never wedge a device's queue, so the refused change is found and rejected
/// and every other change is stored. The fast path takes no savepoints; `PushStore` re-runs
/// the whole batch with `isolatesRefusals` only after a refusal rolled the first try back.
extension PushBatch {
    private struct Mark {
        let results: [ChangeResult?]
        let tally: PushStore.Tally
        let nextVersion: Int64
        let derivedInputsChanged: Bool
    }

    static let savepoint: PGQuery = "SAVEPOINT refusal_isolation"
    static let rollbackToSavepoint: PGQuery = "ROLLBACK TO SAVEPOINT refusal_isolation"
    static let releaseSavepoint: PGQuery = "RELEASE SAVEPOINT refusal_isolation"

    /// Runs `write` for `changes`; on the slow path under a savepoint, and when PostgreSQL
    /// refuses, again for each half, down to the single change refused, which is rejected
    /// (`refused_by_database`). k refused changes among n cost O(k log n) extra statements.
    func isolatingRefusals(_ changes: [PushChange], _ write: ([PushChange]) async throws -> Void) async throws {
        guard isolatesRefusals else {
            try await write(changes)
            return
        }
        let mark = Mark(results: results, tally: tally, nextVersion: nextVersion, derivedInputsChanged: derivedInputsChanged)
        try await connection.query(Self.savepoint)
        do {
            try await write(changes)
            try await connection.query(Self.releaseSavepoint)
        } catch let error as PGError where error.isDataError {
            try await connection.query(Self.rollbackToSavepoint)
            try await connection.query(Self.releaseSavepoint)
            results = mark.results
            tally = mark.tally
            nextVersion = mark.nextVersion
            derivedInputsChanged = mark.derivedInputsChanged
            if changes.count == 1, let change = changes.first {
                reject(change.index, Self.rejection(for: error))
                return
            }
            let half = changes.count / 2
            try await isolatingRefusals(Array(changes[..<half]), write)
            try await isolatingRefusals(Array(changes[half...]), write)
        }
    }

    /// Runs a step that belongs to no single change (the derived-state recompute, the
    /// conflict log). On the slow path a refusal skips the step rather than the batch: the
    /// changes are stored, and the step runs again with the user's next push.
    func skippingRefusal(of step: String, _ body: () async throws -> Void) async throws {
        guard isolatesRefusals else {
            try await body()
            return
        }
        try await connection.query(Self.savepoint)
        do {
            try await body()
            try await connection.query(Self.releaseSavepoint)
        } catch let error as PGError where error.isDataError {
            try await connection.query(Self.rollbackToSavepoint)
            try await connection.query(Self.releaseSavepoint)
            skippedSteps.append("\(step): \(error)")
        }
    }

    /// What the device is told: the constraint or column PostgreSQL named, never values.
    static func rejection(for error: PGError) -> ChangeRejection {
        var reason = "SQLSTATE \(error.sqlState?.code ?? "?")"
        if let constraint = error.constraint { reason += ", constraint \(constraint)" }
        if let column = error.column { reason += ", column \(column)" }
        return ChangeRejection(.refusedByDatabase, "the database refused this change (\(reason)); it was not stored, the rest of the batch was")
    }
}
