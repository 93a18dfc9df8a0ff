import Foundation
import HabitSyncDomain
import LibPQClient

/// One batch being applied inside its push transaction, following its `PushPlan` (validated and
/// grouped before the transaction began): writes each collection's share with a constant number
/// of set-based statements, whatever the batch's size (a rule kind's extension says which), and
/// collects the per-change results and the conflict log. Each rule kind lives in an extension
/// of its own (`PushBatch+LastWriterWins.swift` …).
final class PushBatch {
    let connection: PGConnection
    let tenant: UUID
    let user: String
    let device: String
    let batchID: UUID
    let derivedRecordID: UUID
    let context: ValidationContext
    var now: Date { context.now }
    /// The slow path, taken only after PostgreSQL refused data on the fast one: each
    /// collection's write runs under a savepoint, and a refused change is isolated by
    /// bisection and rejected, so the rest of the batch is still stored.
    let isolatesRefusals: Bool
    /// One node (not Citus): statements Citus cannot route to one worker or refuses are used:
    /// a usage event's registration and insert as one statement
    /// (`SyncTableSQL.registerAndAppendUsageEvents`), one stored day's plain update
    /// (`updateProgressDay`, `now()` inside a CASE).
    let singleNode: Bool
    /// Daily progress's digest and streak-month triggers step aside in this transaction
    /// (`PushStore.settlesDailyProgress`): every write of `daily_progress` the batch makes
    /// adds its digest change to `settledDigests`, which the push's close writes, and the streak
    /// months it can move to `streakMonthsToForget`, forgotten before the recompute.
    let settlesDailyProgress: Bool
    /// The digest changes of the writes whose triggers stepped aside, by collection.
    var settledDigests: [SyncCollection: RecordDigest] = [:]
    /// The first days of the months whose streak summaries those writes can have moved.
    var streakMonthsToForget: Set<LocalDate> = []
    var nextVersion: Int64
    var results: [ChangeResult?] = []
    var raw: [[String: JSONValue]] = []
    var accepted: [Int: PushChange] = [:]
    var tally = PushStore.Tally()
    /// Whether an applied change fed the derived records: set by the writes. A usage event other
    /// than an exit, or settings that kept the time zone, leave them as they are.
    var derivedInputsChanged = false
    /// Field writes that lost in records that merge field by field, for the conflict log.
    var fieldLosses: [FieldLoss] = []
    /// Superseded changes of records merged field by field that no delete beat: the conflict log
    /// holds their lost fields (`fieldLosses`), not the whole change.
    var notLoggedWhole: Set<Int> = []
    /// Steps outside any one change that PostgreSQL refused on the slow path (logged by the caller).
    var skippedSteps: [String] = []
    /// The batch's usage-event ids the registry knew before the batch, read with the prologue
    /// (`PushPrefetch`); nil: not read (the slow path and Citus read nothing ahead).
    var registeredUsageEvents: Set<UUID>?

    init(
        connection: PGConnection, tenant: UUID, user: String, device: String, batchID: UUID, derivedRecordID: UUID, firstVersion: Int64,
        context: ValidationContext, isolatesRefusals: Bool, singleNode: Bool = false, settlesDailyProgress: Bool = false
    ) {
        self.singleNode = singleNode
        self.settlesDailyProgress = settlesDailyProgress
        self.connection = connection
        self.tenant = tenant
        self.user = user
        self.device = device
        self.batchID = batchID
        self.derivedRecordID = derivedRecordID
        self.nextVersion = firstVersion
        self.context = context
        self.isolatesRefusals = isolatesRefusals
    }

    /// Writes whose results the push does not read: on the fast path they go with the next
    /// statement, in its round trip (`PGConnection.deferStatements`; one that fails fails that
    /// statement, and the push is applied again on the slow path); on the slow path, at once,
    /// under the savepoint of their step.
    func writeLater(_ queries: [PGQuery]) async throws {
        if isolatesRefusals {
            _ = try await connection.pipeline(queries)
        } else {
            try connection.deferStatements(queries)
        }
    }

    func allocateVersion() -> Int64 {
        defer { nextVersion += 1 }
        return nextVersion
    }

    // MARK: - Driving

    /// `prefetched`: what the prologue read ahead (`PushPrefetch`; nothing on the slow path,
    /// whose steps run under savepoints).
    func apply(_ plan: PushPlan, raw changes: [[String: JSONValue]], prefetched: PushPrefetch.Found = .init()) async throws {
        raw = changes
        results = Array(repeating: nil, count: changes.count)
        accepted = plan.accepted
        registeredUsageEvents = prefetched.registeredUsageEvents
        for (index, rejection) in plan.rejected { reject(index, rejection) }
        for (position, step) in plan.steps.enumerated() {
            if position == 0, step.collection == .dailyProgress, !prefetched.progress.isEmpty, !isolatesRefusals {
                try await applyDailyProgress(step.changes, prefetched: prefetched.progress)
                continue
            }
            try await isolatingRefusals(step.changes) { changes in try await self.apply(step.collection, changes) }
        }
    }

    /// Writes one collection's share of the batch.
    private func apply(_ collection: SyncCollection, _ changes: [PushChange]) async throws {
        switch collection {
        case .habits:
            try await applyFieldMerge(.habits, changes)
        case .reminders:
            try await applyFieldMerge(.reminders, changes)
        case .dailyProgress:
            try await applyDailyProgress(changes)
        case .focusSessions:
            let adjusted = try await settleRunningSessions(changes)
            try await applyLastWriterWins(
                .focusSessions, changes, updatedByOverride: adjusted.serverAuthored, recordOverride: adjusted.records,
                extraCondition: "NOT (h.state IN ('completed', 'abandoned') AND NOT i.is_delete AND i.state IS DISTINCT FROM h.state)")
        case .selectedApps:
            try await applyFieldMerge(.selectedApps, changes)
        case .userSettings:
            try await applyFieldMerge(.userSettings, changes, by: .user)
        case .xpTransactions:
            try await applyAppendOnly(.xpTransactions, changes)
        case .usageEvents:
            try await applyAppendOnly(.usageEvents, changes)
        case .achievements:
            try await applyFieldMerge(.achievements, changes, by: .achievementID)
        case .globalStreak, .userProgress, .usageStreak:
            break  // refused during validation
        }
    }

    /// Forgets the streak summaries the settled writes can have moved (one statement for the
    /// batch, before the recompute reads them), then recomputes the derived records when this
    /// batch applied a change to their inputs.
    func recomputeDerivedStateIfNeeded() async throws {
        if !streakMonthsToForget.isEmpty {
            try await writeLater([Self.forgetStreakMonths(tenant: tenant, user: user, months: streakMonthsToForget.sorted())])
        }
        guard derivedInputsChanged else { return }
        let writer = DerivedStateWriter(connection: connection, tenant: tenant, user: user, derivedRecordID: derivedRecordID, now: now)
        try await skippingRefusal(of: "derived-state recompute") {
            let (next, writes) = try await writer.recompute(nextVersion: self.nextVersion, deferringWrites: !self.isolatesRefusals)
            self.nextVersion = next
            try await self.writeLater(writes)
        }
    }

    /// The answer; `epoch` is the one the device syncs in from now on.
    func answer(epoch: SyncEpoch?) -> PushAnswer {
        let items = results.enumerated().map { index, result in
            result ?? ChangeResult(index: index, status: .rejected, error: ChangeRejection(.invalidField, "not processed"))
        }
        return PushAnswer(batchID: batchID, epoch: epoch, results: items)
    }

    // MARK: - Results

    func record(_ result: ChangeResult, collection: SyncCollection?) {
        results[result.index] = result
        tally.counts[collection, default: [:]][result.status, default: 0] += 1
    }

    private func rawID(_ index: Int) -> String? {
        guard case .string(let text)? = raw[index]["id"] else { return nil }
        return UUID(uuidString: text)?.uuidString.lowercased() ?? TextRules.storable(String(text.unicodeScalars.prefix(200)))
    }

    func rawCollection(_ index: Int) -> SyncCollection? {
        guard case .string(let text)? = raw[index]["collection"] else { return nil }
        return SyncCollection(rawValue: text)
    }

    func reject(_ index: Int, _ error: any Error) {
        let rejection = error as? ChangeRejection ?? ChangeRejection(.invalidField, "\(error)")
        if rejection.code == .refusedByDatabase { tally.refusals.append("\(PushStore.Tally.label(rawCollection(index))): \(rejection.message)") }
        var result = ChangeResult(index: index, id: rawID(index), status: .rejected, error: rejection)
        result.clamped = accepted[index]?.clamped ?? false
        record(result, collection: rawCollection(index))
    }

    func applied(_ change: PushChange, version: Int64, canonical: UUID? = nil) {
        var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .applied, serverVersion: version)
        if let canonical, canonical != change.id { result.canonicalId = canonical }
        result.clamped = change.clamped
        record(result, collection: change.collection)
    }

    func unchanged(_ change: PushChange, version: Int64?, canonical: UUID? = nil) {
        var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .unchanged, serverVersion: version)
        if let canonical, canonical != change.id { result.canonicalId = canonical }
        result.clamped = change.clamped
        record(result, collection: change.collection)
    }

    func superseded(_ change: PushChange, by stored: StoredRow) {
        var result = ChangeResult(index: change.index, id: change.id.uuidString.lowercased(), status: .superseded, serverVersion: stored.serverVersion)
        result.current = stored.change
        result.clamped = change.clamped
        result.winningKey = (stored.updatedAt, stored.updatedBy)
        if stored.id != change.id { result.canonicalId = stored.id }
        record(result, collection: change.collection)
    }
}
