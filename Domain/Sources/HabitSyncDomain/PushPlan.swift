import Foundation

/// What a batch asks for, decided before the push transaction and without I/O: every change
/// validated (or rejected with its field and rule), the valid ones grouped by collection in
/// the order they are applied (`SyncCollection.applyOrder`: habits before the reminders and
/// progress that refer to them), and the rules that settle changes of one batch among
/// themselves. The store then only has to settle each winner against what is stored.
public struct PushPlan: Sendable {
    /// The changes that passed validation, by their index in the batch.
    public let accepted: [Int: PushChange]
    /// The changes that did not, each with why, in batch order.
    public let rejected: [(index: Int, rejection: ChangeRejection)]
    /// Each collection with valid changes, in apply order, its changes in batch order.
    public let steps: [(collection: SyncCollection, changes: [PushChange])]

    public init(_ changes: [[String: JSONValue]], context: ValidationContext) {
        var accepted: [Int: PushChange] = [:]
        var rejected: [(index: Int, rejection: ChangeRejection)] = []
        var byCollection: [SyncCollection: [PushChange]] = [:]
        for (index, fields) in changes.enumerated() {
            do {
                let change = try PushChange.validate(fields, index: index, context: context)
                accepted[index] = change
                byCollection[change.collection, default: []].append(change)
            } catch {
                rejected.append((index, error))
            }
        }
        self.accepted = accepted
        self.rejected = rejected
        steps = SyncCollection.applyOrder.compactMap { collection in
            byCollection[collection].map { (collection, $0) }
        }
    }

    /// Last writer wins inside one batch: for each target record, the change with the greatest
    /// `updatedAt` to the millisecond (as `LWWKey` compares), the later one in the batch on a
    /// tie (one device sent them all, so the device half of the key is the same).
    public static func lastWriterWinners(_ changes: [PushChange], target: (PushChange) -> UUID) -> [UUID: PushChange] {
        var winners: [UUID: PushChange] = [:]
        for change in changes {
            let key = target(change)
            if let current = winners[key], WireTime.milliseconds(change.updatedAt) < WireTime.milliseconds(current.updatedAt) { continue }
            winners[key] = change
        }
        return winners
    }

    /// Append-only inside one batch: the first change of each id is the one to insert; a later
    /// one with the same record is a repeat, with another record a contradiction.
    public static func firstOfEachID(_ changes: [PushChange]) -> (first: [UUID: PushChange], contradicting: [PushChange]) {
        var first: [UUID: PushChange] = [:]
        var contradicting: [PushChange] = []
        for change in changes {
            if let earlier = first[change.id] {
                if earlier.record != change.record { contradicting.append(change) }
            } else {
                first[change.id] = change
            }
        }
        return (first, contradicting)
    }
}
