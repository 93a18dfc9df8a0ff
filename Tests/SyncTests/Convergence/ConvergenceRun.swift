import Foundation
import HabitSyncClient
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import SyncTestSupport
import TestSupport
import Testing

/// Several users, each with several SDK devices, editing at random against the real server
/// through a faulty network, with offline periods, skewed clocks, app restarts in the middle
/// of syncs, server restarts and purges with short retentions. Then every device syncs once
/// more on a sound network, and the invariants are checked.
struct ConvergenceRun {
    struct Settings: Sendable {
        var users = 3
        var devicesPerUser = 3
        var roundsPerServer = 8
        /// Server processes one after the other: each ends with a restart.
        var servers = 4
        /// Keep starting servers until this much time has passed (the long form); nil: `servers`.
        var minimumDuration: Duration?
    }

    struct Totals: Sendable, CustomStringConvertible {
        var operations: [String: Int] = [:]
        var edits = 0, refusedLocally = 0, syncs = 0, failedSyncs = 0, appRestarts = 0, pullsStartedOver = 0
        var applied = 0, unchanged = 0, superseded = 0, rejected = 0, rekeyed = 0
        var rejectionCodes: [String: Int] = [:]
        var serverRestarts = 0, purges = 0, tombstonesPurged = 0, batchesPurged = 0
        var network = FaultInjectingTransport.Counts()
        var recordsCompared = 0
        var countedDays = 0, countedAdditions = 0
        var comparedFields = 0, loggedFieldLosses = 0
        /// Syncs in the rounds whose digests found a device's copy different (and pulled it
        /// again); the final check requires none after the last sync.
        var digestRepairs = 0, digestsChecked = 0
        /// Changes PostgreSQL refused after Swift had accepted them (`refused_by_database`, as
        /// the conflict log keeps them): a disagreement between the two, reported, not failed,
        /// since a device may never have seen that answer.
        var refusedByDatabase: [String] = []

        var description: String {
            let ops = operations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let codes = rejectionCodes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return """
                operations \(edits) (\(ops)); refused locally \(refusedLocally)
                syncs \(syncs) (failed \(failedSyncs)), app restarts mid-sync \(appRestarts), pulls started over (410) \(pullsStartedOver)
                answers: applied \(applied), unchanged \(unchanged), superseded (conflicts) \(superseded), rejected \(rejected) (\(codes)), re-keyed \(rekeyed)
                server restarts \(serverRestarts), purges \(purges) (tombstones \(tombstonesPurged), batches \(batchesPurged))
                network: requests \(network.requests), dropped requests \(network.droppedRequests), dropped responses \(network.droppedResponses), duplicated \(network.duplicated), delayed \(network.delayed)
                records compared after the final sync \(recordsCompared); days counted \(countedDays) (from \(countedAdditions) acknowledged increments); fields compared \(comparedFields) (lost writes found logged \(loggedFieldLosses))
                digests: repairs during the rounds \(digestRepairs), devices whose final digests matched \(digestsChecked)
                refused by the database \(refusedByDatabase.count)\(refusedByDatabase.isEmpty ? "" : ": " + refusedByDatabase.joined(separator: "; "))
                """
        }
    }

    let settings: Settings

    func run() async throws -> Totals {
        let world = try await SyncWorld.make()
        let transport = FaultInjectingTransport()
        let directory = try makeTemporaryDirectory("habitsync-convergence")
        defer { try? FileManager.default.removeItem(at: directory) }
        var devices: [[SimulatedDevice]] = []
        for user in 0..<settings.users {
            let token = try await world.token(user: "user-\(user)")
            devices.append(
                try (0..<settings.devicesPerUser).map { index in
                    // Clocks spread over ±10 minutes: each user has one far behind and one far ahead
                    // (beyond the server's 5-minute allowance: clamped writes, refused event times).
                    let spread = Double(index) / Double(max(1, settings.devicesPerUser - 1))
                    let skew = min(600, max(-600, -600 + 1200 * spread + Double.random(in: -30...30)))
                    return try SimulatedDevice(name: "u\(user)-device-\(index)", directory: directory, skew: skew, transport: transport, token: token)
                })
        }
        let everyDevice = devices.flatMap { $0 }
        var totals = Totals()
        var purged = PurgedRecords()
        let started = ContinuousClock.now
        var server = 0
        while true {
            let isLast: Bool
            if let minimum = settings.minimumDuration { isLast = ContinuousClock.now - started >= minimum } else { isLast = server + 1 >= settings.servers }
            try await world.serve { running in
                guard let url = URL(string: running.baseURL) else { throw URLError(.badURL) }
                transport.route(to: url)
                for _ in 0..<settings.roundsPerServer {
                    try await Self.round(everyDevice)
                    if Int.random(in: 0..<3) == 0 {
                        // The conflict log is kept: the field check looks every lost write up in it.
                        // The tombstones around it say which records it purged, and when.
                        let (report, before, after) = try await world.database.withPool(size: 1) { pool in
                            let before = try await pool.withConnection { try await PurgedRecords.tombstones($0, tenant: world.tenant) }
                            let report = try await MaintenanceStore(pool: pool).run(
                                retention: .init(tombstones: 0.001, pushBatches: 0.001, conflicts: 90 * 86_400, usageEvents: 90 * 86_400), now: Date().addingTimeInterval(1))
                            return (report, before, try await pool.withConnection { try await PurgedRecords.tombstones($0, tenant: world.tenant) })
                        }
                        purged.note(before: before, after: after)
                        for device in everyDevice { device.ledger.note("maintenance purged \(report.tombstonesPurged) tombstones") }
                        totals.purges += 1
                        totals.tombstonesPurged += report.tombstonesPurged
                        totals.batchesPurged += report.pushBatchesPurged
                    }
                }
                if isLast { try await Self.finish(devices, world: world, transport: transport, purged: purged, totals: &totals) }
            }
            server += 1
            if isLast { break }
            for device in everyDevice { device.ledger.note("server restarted") }
            totals.serverRestarts += 1
        }
        for device in everyDevice {
            let counts = await device.counts
            for (name, count) in counts.operations { totals.operations[name, default: 0] += count }
            totals.refusedLocally += counts.refusedLocally
            totals.syncs += counts.syncs
            totals.failedSyncs += counts.failedSyncs
            totals.appRestarts += counts.restarts
            totals.pullsStartedOver += counts.pullsStartedOver
            totals.digestRepairs += counts.digestRepairs
            let ledger = device.ledger.counts
            totals.edits += ledger.edits
            totals.applied += ledger.applied
            totals.unchanged += ledger.unchanged
            totals.superseded += ledger.superseded
            totals.rejected += ledger.rejected
            totals.rekeyed += ledger.rekeyed
            for (code, count) in ledger.rejectionCodes { totals.rejectionCodes[code, default: 0] += count }
            #expect(ledger.unnamedWinners == 0, "\(device.name): a conflict without a named winner")
        }
        totals.network = transport.counts
        return totals
    }

    /// Every device at once: some are offline (they only edit), some are killed mid-sync.
    static func round(_ devices: [SimulatedDevice]) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask {
                    await device.act(Int.random(in: 0...6))
                    switch Int.random(in: 0..<10) {
                    case 0, 1: break  // offline this round
                    case 2: try await device.syncAndRestart()
                    default: await device.sync()
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// A sound network; every device syncs until its outbox is empty, then once more to pull
    /// what the others pushed last; then the checks.
    static func finish(
        _ devices: [[SimulatedDevice]], world: SyncWorld, transport: FaultInjectingTransport, purged: PurgedRecords, totals: inout Totals
    ) async throws {
        transport.setFaults(false)
        for _ in 0..<2 {
            for device in devices.flatMap({ $0 }) {
                for _ in 0..<20 {
                    let done = await device.syncedOnce
                    if done, try await device.store.pendingCount() == 0 { break }
                    await device.sync()
                }
                await device.resetSyncedOnce()
            }
        }
        for device in devices.flatMap({ $0 }) {
            let found = try await device.finalDigestCheck()
            #expect(found.isEmpty, "\(device.name): digests differ after the final sync: \(found)")
            if found.isEmpty { totals.digestsChecked += 1 }
        }
        for (user, userDevices) in devices.enumerated() {
            let auditor = try LocalStore(path: nil, deviceID: "auditor")
            _ = try await SyncEngine(store: auditor, baseURL: URL(string: "http://auditor.invalid/")!, transport: transport) {
                try await world.token(user: "user-\(user)")
            }.sync()
            for device in userDevices {
                totals.recordsCompared += try await check(device, against: auditor, world: world, user: "user-\(user)")
            }
            let counting = CountingCheck(transport.answeredPushes, devices: Set(userDevices.map(\.name)))
            totals.countedDays += try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { try await counting.check($0, tenant: world.tenant, user: "user-\(user)") }
            }
            totals.countedAdditions += counting.additions
            let fieldCheck = FieldCheck(transport.answeredPushes, devices: Set(userDevices.map(\.name)))
            let (fields, logged) = try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { try await fieldCheck.check($0, tenant: world.tenant, user: "user-\(user)", purged: purged) }
            }
            totals.comparedFields += fields
            totals.loggedFieldLosses += logged
            totals.refusedByDatabase += try await world.database.withPool(size: 1) { pool in
                try await pool.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT collection || ' ' || op || ': ' || error_message AS refusal FROM conflict_log
                        WHERE tenant_id = \(world.tenant) AND user_id = \("user-\(user)") AND error_code = 'refused_by_database'
                        """
                    ).rows.map { try $0.decode("refusal", as: String.self) }
                }
            }
            let (incremental, full) = try await world.database.withPool(size: 1) {
                try await DerivedStateAudit(pool: $0).compare(tenant: world.tenant, user: "user-\(user)")
            }
            #expect(incremental == full, "user-\(user): derived state kept incrementally differs from a recompute")
        }
    }

    /// The device holds exactly what a fresh pull returns, but for records it holds as
    /// `failed` (each the answer to its edit); every edit is accounted for.
    static func check(_ device: SimulatedDevice, against auditor: LocalStore, world: SyncWorld, user: String) async throws -> Int {
        let store = await device.store
        #expect(try store.pendingCount() == 0, "\(device.name) still has pending edits")
        var failed = Set<UUID>()
        for collection in SyncCollection.allCases {
            for record in try store.records(collection, includingDeleted: true) where record.syncStatus == .failed {
                failed.insert(record.id)
                #expect(device.ledger.wasRejected(.init(collection: collection, id: record.id)), "\(device.name): \(collection) \(record.id) failed without a rejection")
            }
        }
        let lost = device.ledger.unaccounted()
        #expect(lost.isEmpty, "\(device.name): edits without an answer: \(lost.prefix(5))")
        var compared = 0
        func same<Model: SyncModel>(_ type: Model.Type) async throws {
            let mine = try store.fetchAll(type).filter { !failed.contains($0.id) }
            let server = try auditor.fetchAll(type).filter { !failed.contains($0.id) }
            let mineByID = Dictionary(mine.map { ($0.id, $0.value) }, uniquingKeysWith: { first, _ in first })
            let serverByID = Dictionary(server.map { ($0.id, $0.value) }, uniquingKeysWith: { first, _ in first })
            let differing = Set(mineByID.keys).union(serverByID.keys).filter { mineByID[$0] != serverByID[$0] }
            if !differing.isEmpty {
                var explained: [String] = []
                for id in differing.prefix(3) {
                    explained.append(
                        try await explain(
                            Model.collection, id, device: device, world: world, user: user,
                            mine: mineByID[id].map { String(describing: $0) }, server: serverByID[id].map { String(describing: $0) }))
                }
                Issue.record("\(device.name): \(differing.count) \(Model.collection) records differ from the server's:\n\(explained.joined(separator: "\n"))")
            }
            compared += server.count
        }
        try await same(Habit.self)
        try await same(Reminder.self)
        try await same(DailyProgress.self)
        try await same(XPTransaction.self)
        try await same(Achievement.self)
        try await same(FocusSession.self)
        try await same(UsageEvent.self)
        try await same(SelectedApp.self)
        try await same(UserSettings.self)
        try await same(GlobalStreak.self)
        try await same(UserProgress.self)
        try await same(UsageStreak.self)
        return compared
    }
}
