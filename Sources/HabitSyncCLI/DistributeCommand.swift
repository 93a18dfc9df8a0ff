import ArgumentParser
import Foundation
import HabitSyncStore
import LibPQClient

/// `habitsync-server distribute`: the Citus path of deploy/README.md.
struct DistributeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "distribute",
        abstract: "Distribute a migrated database over its Citus cluster (run on the coordinator; again after migrations).",
        discussion: """
            Reference tables for tenants and keys; users and every per-user table distributed by user_id and co-located;
            the habitsync functions on every node; habitsync_app allowed to log in (Citus reaches the workers as it).
            An empty or populated database: rows are copied into the shards, counted before and after, and the
            coordinator's local copies truncated; every row once, or nothing changes. One transaction; what is already
            distributed is left alone. Needs the citus extension on every node, and a superuser.
            """)

    @OptionGroup var common: CommonOptions
    @Option(name: .customLong("shard-count"), help: ArgumentHelp("Shards per distributed table (the first distribution only). Default: citus.shard_count (32).", valueName: "n"))
    var shardCount: Int?
    @Flag(help: "Print one JSON object.") var json = false

    /// What `habitsync_distribute` refuses with: no citus extension, not migrated, not a
    /// superuser, rows that would not arrive once. Each leaves the database as it was.
    static let refusals: [PGSQLState?] = [.featureNotSupported, .undefinedFunction, .insufficientPrivilege, .dataException]

    func validate() throws {
        if let shardCount, !(1...10_000).contains(shardCount) { throw ValidationError("--shard-count must be a whole number from 1 to 10000") }
    }

    func run() async throws {
        let steps = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server distribute") { pool in
            do {
                return try await DistributionStore(pool: pool).distribute(shardCount: shardCount)
            } catch let error as PGError where Self.refusals.contains(error.sqlState) {
                throw CLIFailure(message: "cannot distribute: \(error.message)" + (error.sqlState == .undefinedFunction ? " (run `habitsync-server migrate up` first)" : ""))
            }
        }
        if json {
            let object: [String: Any] = ["changed": steps.map { ["relation": $0.relation, "became": $0.became] }]
            try JSONLine.print(object)
            return
        }
        if steps.isEmpty { print("already distributed; nothing to do") }
        for step in steps { print("\(step.relation): \(step.became)") }
    }
}
