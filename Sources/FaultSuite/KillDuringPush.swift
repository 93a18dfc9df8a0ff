import Foundation
import ServerHarness

/// kill -9 the server in the middle of a push load, then start it again: every push that was
/// acknowledged is stored, no batch is half applied, and the devices' retries of the batches
/// they never heard back about complete exactly once.
enum KillDuringPush {
    static let name = "kill -9 during a push load"

    static func run(_ environment: FaultEnvironment, scale: FaultScale) async throws -> FaultReport {
        var report = FaultReport(scenario: name)
        let server = try await environment.startServer()
        let devices = try await environment.pushingDevices(count: scale.devices, batches: scale.batchesPerDevice, prefix: "kill", baseURL: server.baseURL)
        let log = PushLog()
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(300)
        let totalBatches = scale.devices * scale.batchesPerDevice

        async let load = withTaskGroup(of: Int.self) { group in
            for device in devices { group.addTask { await device.run(log: log, policy: .untilAcknowledged, deadline: deadline) } }
            return await group.reduce(0, +)
        }

        // Kill once about a third of the batches are acknowledged, with every device mid-queue.
        while log.acknowledgedCount < totalBatches / 3 && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        server.send(SIGKILL)
        let killedAt = clock.now
        let status = await server.waitForExit(timeout: .seconds(10))
        report.check(status == SIGKILL && server.wasKilledBySignal, "the server died of SIGKILL (status \(status.map(String.init) ?? "still running"))")

        // The database as the crash left it, before any retry can touch it.
        let acknowledgedBeforeKill = log.all.filter { $0.isAcknowledged && $0.finished <= killedAt }
        let atCrash = try await StoredBatches.read(environment.database.pool, tenant: environment.database.tenant)
        let lost = acknowledgedBeforeKill.filter { !atCrash.isComplete(devices[$0.device].batches[$0.batch], user: devices[$0.device].user) }
        let crashTally = atCrash.tally(devices)
        report.check(
            lost.isEmpty, "every push acknowledged before the kill is stored (acknowledged \(acknowledgedBeforeKill.count), found \(acknowledgedBeforeKill.count - lost.count), lost \(lost.count))")
        report.check(crashTally.partial == 0, "no batch is partly applied at the crash (complete \(crashTally.complete), absent \(crashTally.absent), partial \(crashTally.partial))")
        let committedUnacknowledged = crashTally.complete - acknowledgedBeforeKill.count

        try await Task.sleep(for: .milliseconds(500))  // devices keep retrying into a refused port
        try await server.start()
        let restartedAt = clock.now
        let acknowledgedTotal = await load

        let attempts = log.all
        let final = try await StoredBatches.read(environment.database.pool, tenant: environment.database.tenant)
        let finalTally = final.tally(devices)
        let refused = attempts.count(where: \.isTransportFailure)
        let otherStatuses = attempts.compactMap(\.errorStatus)
        // A retry of a batch that had been committed must be answered from the idempotency
        // record ("applied", as first answered), never applied again ("unchanged").
        let acknowledgements = attempts.compactMap(\.results)
        let notApplied = acknowledgements.count { $0.count != TrackedBatch.changeCount || $0.contains { $0 != "applied" } }

        report.check(acknowledgedTotal == totalBatches, "after the restart every device's queue completes (acknowledged \(acknowledgedTotal) of \(totalBatches))")
        report.check(
            finalTally.complete == totalBatches && finalTally.partial == 0,
            "every batch is stored exactly once (complete \(finalTally.complete), partial \(finalTally.partial), absent \(finalTally.absent))")
        report.check(notApplied == 0, "every acknowledgement, first answer or replayed retry, reports all \(TrackedBatch.changeCount) changes applied (\(notApplied) did not)")
        report.check(final.totalRecords == totalBatches * TrackedBatch.changeCount, "the tenant holds exactly \(totalBatches * TrackedBatch.changeCount) records (found \(final.totalRecords))")
        report.check(otherStatuses.isEmpty, "no push was answered with an error status (\(otherStatuses.count) were: \(Set(otherStatuses).sorted()))")

        report.count("batches", totalBatches)
        report.count("pushes acknowledged before the kill", acknowledgedBeforeKill.count)
        report.count("found", acknowledgedBeforeKill.count - lost.count)
        report.count("lost", lost.count)
        report.count("committed but unacknowledged at the kill (completed by retry)", max(0, committedUnacknowledged))
        report.count("attempts refused while down", refused)
        report.note(String(format: "server restarted %.1f s after the kill", (restartedAt - killedAt) / .seconds(1)))
        return report
    }
}
