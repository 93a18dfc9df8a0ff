import Foundation
import ServerHarness
import Synchronization

/// PostgreSQL stops for a while during a push load: requests get 503 with Retry-After (never a
/// 500, never a dropped connection), and the same server process serves again within seconds
/// of PostgreSQL returning, with nothing lost. An event stream open throughout is told to pull
/// once the server listens again, and hears the next change.
enum DatabaseOutage {
    static let name = "PostgreSQL stopped during a push load"

    static func run(_ environment: FaultEnvironment, scale: FaultScale) async throws -> FaultReport {
        var report = FaultReport(scenario: name)
        let server = try await environment.startServer()
        let pid = server.processIdentifier
        // More batches than the load can finish before the outage, so devices push through it.
        let devices = try await environment.pushingDevices(count: scale.devices, batches: scale.batchesPerDevice * 2, prefix: "outage", baseURL: server.baseURL)
        let log = PushLog()
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(300)
        let totalBatches = devices.count * scale.batchesPerDevice * 2
        let readiness = Mutex<[(sent: ContinuousClock.Instant, at: ContinuousClock.Instant, status: Int)]>([])
        let probe = DeviceClient(baseURL: server.baseURL, token: "", device: "probe", timeout: 10)
        let probing = Atomic<Bool>(true)
        let watcherToken = try await environment.database.token(user: "outage-watcher")
        let port = server.port
        let watcher = try await onOwnThread { try EventStreamSocket(port: port, token: watcherToken, device: "watch") }

        async let load = withTaskGroup(of: Int.self) { group in
            for device in devices { group.addTask { await device.run(log: log, policy: .untilAcknowledged, deadline: deadline) } }
            return await group.reduce(0, +)
        }
        async let probes: Void = {
            while probing.load(ordering: .relaxed) && !Task.isCancelled {
                // Sent and answered: a probe sent just before the stop may be answered from the
                // database it reached, however late the answer arrives; one answered after the
                // start began may have reached the database coming back.
                let sent = clock.now
                let status = (try? await probe.get("/readyz").status) ?? 0
                readiness.withLock { $0.append((sent, clock.now, status)) }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }()

        while log.acknowledgedCount < totalBatches / 6 && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        // Whatever the stream got so far (a pull when the listener first connected) is not
        // what is checked: only what comes after the outage.
        try await waitUntilListening(baseURL: server.baseURL)
        try await onOwnThread { watcher.drain() }
        try await environment.database.stopCluster()
        let stoppedAt = clock.now
        try await Task.sleep(for: scale.outage)
        // PostgreSQL accepts connections before pg_ctl returns: the outage ends when the start begins.
        let backAt = clock.now
        try await environment.database.startCluster()
        let acknowledgedTotal = await load
        probing.store(false, ordering: .relaxed)
        await probes
        // The stream lived through the outage; the server's listener came back and said so.
        let toldToPull = (try? await onOwnThread { try watcher.waitFor("event: pull", milliseconds: 60_000) }) ?? false
        let change = try await environment.client(user: "outage-watcher", device: "phone", baseURL: server.baseURL)
            .push(
                Data(
                    #"{"batchId":"\#(UUID().uuidString)","changes":[{"collection":"xpTransactions","op":"upsert","id":"\#(UUID().uuidString)","updatedAt":"2026-01-01T00:00:00.000Z","record":{"amount":5,"reason":"after the outage","timestamp":"2026-01-01T00:00:00.000Z"}}]}"#
                        .utf8))
        let heardChange = change.status == 200 ? ((try? await onOwnThread { try watcher.waitFor("event: change", milliseconds: 60_000) }) ?? false) : false

        let attempts = log.all
        let during = attempts.filter { $0.finished > stoppedAt && $0.started < backAt }
        let unavailable = attempts.filter { $0.errorStatus == 503 }
        let withoutRetryAfter = unavailable.count { if case .status(_, let retryAfter) = $0.outcome { return Int(retryAfter ?? "") == nil } else { return false } }
        let otherStatuses = attempts.compactMap(\.errorStatus).filter { $0 != 503 }
        let transportFailures = attempts.count(where: \.isTransportFailure)
        let firstServedAfter = attempts.filter { $0.isAcknowledged && $0.started >= backAt }.map(\.finished).min()
        let recovery = firstServedAfter.map { ($0 - backAt) / .seconds(1) }
        let probesDown = readiness.withLock { $0.filter { $0.sent > stoppedAt + .seconds(1) && $0.at < backAt } }
        let readyAgain = readiness.withLock { $0.contains { $0.at > backAt && $0.status == 200 } }

        let stored = try await StoredBatches.read(environment.database.pool, tenant: environment.database.tenant)
        let tally = stored.tally(devices)
        let acknowledged = attempts.filter(\.isAcknowledged)
        let lost = acknowledged.count { !stored.isComplete(devices[$0.device].batches[$0.batch], user: devices[$0.device].user) }

        report.check(!unavailable.isEmpty, "pushes during the outage were answered 503 (\(unavailable.count) times)")
        report.check(withoutRetryAfter == 0, "every 503 carried a Retry-After header in seconds (\(withoutRetryAfter) did not)")
        report.check(otherStatuses.isEmpty, "no other error status, no 500 (\(otherStatuses.count): \(Set(otherStatuses).sorted()))")
        report.check(transportFailures == 0, "no connection was dropped or refused: the server kept answering (\(transportFailures) transport failures)")
        report.check(
            !probesDown.isEmpty && probesDown.allSatisfy { $0.status == 503 },
            "/readyz answered 503 throughout the outage (\(probesDown.count) probes: \(Dictionary(grouping: probesDown, by: \.status).mapValues(\.count).sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", ")))"
        )
        report.check(readyAgain, "/readyz answered 200 again after PostgreSQL returned")
        report.check(server.isRunning && server.processIdentifier == pid, "the same server process (pid \(pid)) served before, during and after")
        if let recovery {
            report.check(recovery < 30, String(format: "pushes were acknowledged again %.1f s after PostgreSQL began to start", recovery))
        } else {
            report.check(false, "no push was acknowledged after PostgreSQL returned")
        }
        report.check(toldToPull, "an event stream open through the outage was told to pull when the server listened again")
        report.check(heardChange, "… and heard the first change pushed after it")
        report.check(acknowledgedTotal == totalBatches, "every device's queue completed (acknowledged \(acknowledgedTotal) of \(totalBatches))")
        report.check(
            lost == 0 && tally.partial == 0 && tally.complete == totalBatches,
            "every acknowledged batch is stored whole and exactly once (found \(acknowledged.count - lost), lost \(lost), partial \(tally.partial))")

        report.count("batches", totalBatches)
        report.count("pushes acknowledged", acknowledged.count)
        report.count("found", acknowledged.count - lost)
        report.count("lost", lost)
        report.count("503 answers", unavailable.count)
        report.count("attempts during the outage", during.count)
        report.note(String(format: "PostgreSQL was down %.1f s", (backAt - stoppedAt) / .seconds(1)))
        return report
    }
}
