import Foundation
import Testing

/// The device SDK and the server agree, whatever the network, the clocks and the restarts do
/// (`ConvergenceRun`). The short form runs with the suite; `scripts/convergence MINUTES` runs
/// the long form (more users and devices, servers restarted until the time is up).
@Suite struct ConvergenceTests {
    @Test func devicesConvergeThroughFaultsRestartsAndPurges() async throws {
        var settings = ConvergenceRun.Settings()
        if let minutes = ProcessInfo.processInfo.environment["HABITSYNC_CONVERGENCE_MINUTES"].flatMap(Double.init), minutes > 0 {
            settings = .init(users: 3, devicesPerUser: 4, roundsPerServer: 20, servers: 1, minimumDuration: .seconds(minutes * 60))
        }
        let totals = try await ConvergenceRun(settings: settings).run()
        print("convergence:\n\(totals)")
        #expect(totals.recordsCompared > 0)
        #expect(totals.applied > 0 && totals.superseded > 0 && totals.appRestarts > 0)
    }
}
