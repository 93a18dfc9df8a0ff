import Foundation
import HabitSyncClient
import HabitSyncDomain
import Synchronization

/// What one device's app knows of its own edits and of the server's answers, kept outside the
/// device's store (it survives the app's restarts): every edit must end with an answer for
/// it, or be merged into the record another device made of the same thing (`canonicalId`).
final class ConvergenceLedger: Sendable {
    struct Key: Hashable, Sendable {
        let collection: SyncCollection
        let id: UUID
    }

    struct Counts: Sendable {
        var edits = 0
        var applied = 0, unchanged = 0, superseded = 0, rejected = 0, rekeyed = 0
        var rejectionCodes: [String: Int] = [:]
        var unnamedWinners = 0
    }

    private struct State {
        var clock = 0
        var lastEdit: [Key: Int] = [:]
        var answered: [Key: Int] = [:]
        var merged: [Key: Int] = [:]
        var rejected: Set<Key> = []
        /// What happened to each record, in order, for the message of a failed check.
        var history: [Key: [String]] = [:]
        /// What happened to the whole device (pulls started over, app restarts).
        var deviceEvents: [String] = []
        var counts = Counts()
    }

    private let state = Mutex(State())

    var counts: Counts { state.withLock { $0.counts } }

    func edited(_ collection: SyncCollection, _ id: UUID, operation: String = "edit") {
        state.withLock { state in
            state.clock += 1
            state.counts.edits += 1
            let key = Key(collection: collection, id: id)
            state.lastEdit[key] = state.clock
            state.history[key, default: []].append("\(state.clock) \(operation)")
        }
    }

    /// Something that happened to the whole device (a pull started over, an app restart).
    func note(_ event: String) {
        state.withLock { state in
            state.clock += 1
            state.deviceEvents.append("\(state.clock) \(event)")
        }
    }

    /// The record's events and the device's, in order (each starts with its clock).
    func history(_ key: Key) -> [String] {
        state.withLock { state in
            ((state.history[key] ?? []) + state.deviceEvents).sorted { Int($0.prefix { $0 != " " }) ?? 0 < Int($1.prefix { $0 != " " }) ?? 0 }
        }
    }

    func settled(_ report: SettleReport) {
        state.withLock { state in
            state.clock += 1
            for rekey in report.rekeyed {
                state.counts.rekeyed += 1
                state.merged[Key(collection: rekey.collection, id: rekey.to)] = state.clock
                state.merged[Key(collection: rekey.collection, id: rekey.from)] = state.clock
                state.history[Key(collection: rekey.collection, id: rekey.to), default: []].append("\(state.clock) re-keyed from \(rekey.from)")
                state.history[Key(collection: rekey.collection, id: rekey.from), default: []].append("\(state.clock) re-keyed to \(rekey.to)")
            }
            for outcome in report.outcomes {
                switch outcome.status {
                case .applied: state.counts.applied += 1
                case .unchanged: state.counts.unchanged += 1
                case .superseded: state.counts.superseded += 1
                case .rejected: state.counts.rejected += 1
                }
                state.history[Key(collection: outcome.collection, id: outcome.sentID), default: []]
                    .append("\(state.clock) \(outcome.status.rawValue)\(outcome.editedSince ? " (edited since)" : "")\(outcome.id != outcome.sentID ? " as \(outcome.id)" : "")")
                guard !outcome.editedSince else { continue }
                for id in [outcome.sentID, outcome.id] {
                    let key = Key(collection: outcome.collection, id: id)
                    state.answered[key] = state.clock
                    if outcome.status == .rejected { state.rejected.insert(key) } else { state.rejected.remove(key) }
                }
            }
            for rejection in report.rejected {
                state.counts.rejectionCodes[rejection.failure.code, default: 0] += 1
            }
            state.counts.unnamedWinners += report.conflicts.filter { $0.winnerUpdatedBy.isEmpty }.count
        }
    }

    /// Edits whose last version got no answer and was not merged: lost, if any.
    func unaccounted() -> [Key] {
        state.withLock { state in
            state.lastEdit.compactMap { key, edit in
                (state.answered[key] ?? 0) > edit || (state.merged[key] ?? 0) > edit ? nil : key
            }
        }
    }

    func wasRejected(_ key: Key) -> Bool { state.withLock { $0.rejected.contains(key) } }
}
