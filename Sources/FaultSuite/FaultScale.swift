/// How much load each scenario runs: `quick` is the form CI runs with the test suite,
/// `full` what `scripts/faults` runs.
public struct FaultScale: Sendable {
    /// Devices (each its own user) pushing during the kill, outage and SIGTERM scenarios.
    public var devices: Int
    /// Batches each of those devices pushes.
    public var batchesPerDevice: Int
    /// How long PostgreSQL stays down in the outage scenario.
    public var outage: Duration
    /// Users, devices per user, and push-then-pull rounds per device across two replicas.
    public var replicaUsers: Int
    public var devicesPerUser: Int
    public var replicaRounds: Int

    public static let quick = FaultScale(devices: 4, batchesPerDevice: 12, outage: .seconds(10), replicaUsers: 2, devicesPerUser: 3, replicaRounds: 8)
    public static let full = FaultScale(devices: 16, batchesPerDevice: 40, outage: .seconds(10), replicaUsers: 4, devicesPerUser: 4, replicaRounds: 25)
}
