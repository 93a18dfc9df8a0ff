import Foundation
import HabitSyncStore
import LibPQClient
import ServerHarness

/// SIGTERM during a push load: the requests in flight finish and are stored, new ones are
/// refused, and the process exits 0.
///
/// One push is made to be in flight for certain: the scenario holds the row lock its user's
/// push needs, sees the push waiting for it in `pg_stat_activity`, sends SIGTERM, checks that
/// the server is still draining and refuses a new connection, then lets the push go.
enum DrainOnSIGTERM {
    static let name = "SIGTERM during a push load"

    static func lockUserRow(tenant: UUID, user: String) -> PGQuery {
        "SELECT 1 FROM users WHERE tenant_id = \(tenant) AND user_id = \(user) FOR UPDATE"
    }

    /// The lock holder's id as lock waits name it: its backend's pid; on Citus, where the row
    /// and so the wait are on a worker, its global pid.
    static func holderID(onCitus: Bool) -> PGQuery {
        onCitus ? "SELECT citus_backend_gpid()::int8 AS id" : "SELECT pg_backend_pid()::int8 AS id"
    }

    static func sessionsBlockedBy(_ holder: Int64, onCitus: Bool) -> PGQuery {
        onCitus
            ? "SELECT count(*)::int8 AS waiting FROM citus_lock_waits WHERE blocking_gpid = \(holder)"
            : "SELECT count(*)::int8 AS waiting FROM pg_stat_activity WHERE \(holder) = ANY(pg_blocking_pids(pid))"
    }

    static func run(_ environment: FaultEnvironment, scale: FaultScale) async throws -> FaultReport {
        var report = FaultReport(scenario: name)
        let server = try await environment.startServer(extraArguments: ["--drain-timeout", "60s"])
        let database = environment.database
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(300)

        // The held device's user exists, so the lock below is the one its next push waits for.
        let held = try await environment.pushingDevices(count: 1, batches: 2, prefix: "held", baseURL: server.baseURL)[0]
        let first = try await held.client.push(held.batches[0].body)
        guard first.status == 200 else { throw HarnessError("setup push answered \(first.status)") }

        let devices = try await environment.pushingDevices(count: scale.devices, batches: scale.batchesPerDevice * 4, prefix: "drain", baseURL: server.baseURL)
        let log = PushLog()
        async let load = withTaskGroup(of: Int.self) { group in
            for device in devices { group.addTask { await device.run(log: log, policy: .stopWhenRefused, deadline: deadline) } }
            return await group.reduce(0, +)
        }
        while log.acknowledgedCount < scale.devices * 2 && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }

        var signalledAt = clock.now
        var drainingAfterOneSecond = false
        var newConnectionRefused = false
        var refusalSeenAt = clock.now
        let onCitus = try await DistributionStore(pool: database.pool).isCitus()
        let heldPush = try await database.pool.withTransaction { connection in
            try await connection.query(lockUserRow(tenant: database.tenant, user: held.user))
            let holder = try await connection.query(holderID(onCitus: onCitus)).single().decode("id", as: Int64.self)
            let push = Task { try? await held.client.push(held.batches[1].body) }
            var waiting: Int64 = 0
            while waiting == 0 && clock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                waiting = try await database.pool.withConnection { try await $0.query(sessionsBlockedBy(holder, onCitus: onCitus)).single().decode("waiting", as: Int64.self) }
            }
            server.send(SIGTERM)
            signalledAt = clock.now
            try await Task.sleep(for: .seconds(1))
            drainingAfterOneSecond = server.isRunning
            let newcomer = try await environment.client(user: "newcomer", device: "newcomer", baseURL: server.baseURL)
            refusalSeenAt = clock.now
            newConnectionRefused = (try? await newcomer.push(TrackedBatch(round: 0).body)) == nil
            return push  // committing releases the lock
        }
        let heldReply = await heldPush.value
        let exitStatus = await server.waitForExit(timeout: .seconds(60))
        let acknowledgedTotal = await load

        let attempts = log.all
        let stored = try await StoredBatches.read(database.pool, tenant: database.tenant)
        let acknowledged = attempts.filter(\.isAcknowledged)
        let lost = acknowledged.count { !stored.isComplete(devices[$0.device].batches[$0.batch], user: devices[$0.device].user) }
        let acknowledgedIDs = Set(acknowledged.map { "\($0.device)/\($0.batch)" })
        var storedButUnacknowledged = 0
        var partial = 0
        for device in devices {
            for (number, batch) in device.batches.enumerated() {
                let records = stored.storedRecords(of: batch)
                if records != 0 && !stored.isComplete(batch, user: device.user) { partial += 1 }
                if records != 0 && !acknowledgedIDs.contains("\(device.index)/\(number)") { storedButUnacknowledged += 1 }
            }
        }
        let inFlightFinished = acknowledged.count { $0.started < signalledAt && $0.finished > signalledAt }
        let refused = attempts.count(where: \.isTransportFailure)
        // Measured from the moment a new connection was seen refused, not from the signal: how
        // soon the listener closes depends on how busy the machine is, and is not the claim.
        let startedAfterAndServed = acknowledged.count { $0.started > refusalSeenAt }
        let otherStatuses = attempts.compactMap(\.errorStatus)

        report.check(drainingAfterOneSecond, "one second after SIGTERM the server still runs, draining the push held in flight")
        report.check(newConnectionRefused, "a new request after SIGTERM is refused")
        report.check(heldReply?.status == 200, "the push in flight at SIGTERM finished with 200 (got \(heldReply.map { String($0.status) } ?? "no answer"))")
        report.check(stored.isComplete(held.batches[1], user: held.user), "the push in flight at SIGTERM is stored")
        report.check(exitStatus == 0 && !server.wasKilledBySignal, "the process exited 0 (status \(exitStatus.map(String.init) ?? "still running"))")
        report.check(lost == 0, "every acknowledged push is stored (acknowledged \(acknowledged.count), found \(acknowledged.count - lost), lost \(lost))")
        report.check(
            storedButUnacknowledged == 0 && partial == 0, "no request was cut off half way: nothing is stored that was not acknowledged (\(storedButUnacknowledged)), no batch partly (\(partial))")
        report.check(startedAfterAndServed == 0, "once new connections were refused, no load request was served any more, not even on a kept-alive connection (\(startedAfterAndServed) were)")
        report.check(otherStatuses.isEmpty, "no push was answered with an error status (\(otherStatuses.count))")

        report.count("pushes acknowledged", acknowledged.count)
        report.count("found", acknowledged.count - lost)
        report.count("lost", lost)
        report.count("load requests in flight at SIGTERM that finished with 200", inFlightFinished)
        report.count("requests refused after SIGTERM", refused)
        report.count("batches acknowledged by the load", acknowledgedTotal)
        return report
    }
}
