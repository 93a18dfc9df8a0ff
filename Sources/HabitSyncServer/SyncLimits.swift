/// Limits of the sync endpoints (configurable; spec defaults).
public struct SyncLimits: Sendable {
    public var maximumChanges: Int
    public var maximumBodyBytes: Int
    /// How far ahead of the server clock `updatedAt` may be before it is clamped.
    public var maximumClockSkewSeconds: Double

    public init(maximumChanges: Int = 1000, maximumBodyBytes: Int = 8 * 1024 * 1024, maximumClockSkewSeconds: Double = 300) {
        self.maximumChanges = maximumChanges
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumClockSkewSeconds = maximumClockSkewSeconds
    }
}
