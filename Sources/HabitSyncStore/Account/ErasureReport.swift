/// What an erasure removed (or, as a dry run, would remove): rows per table. Usage-event
/// partitions count under `usage_events`; archived partitions by their own name
/// (`archive.usage_events_2025_01`). Tables with no rows are left out.
public struct ErasureReport: Sendable, Equatable {
    public var rows: [String: Int64]
    public var dryRun: Bool

    public init(rows: [String: Int64], dryRun: Bool) {
        self.rows = rows
        self.dryRun = dryRun
    }

    public var total: Int64 { rows.values.reduce(0, +) }
}
