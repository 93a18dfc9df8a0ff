import ArgumentParser
import Foundation
import HabitSyncDomain
import HabitSyncStore

/// `habitsync-server tenant set-limits | show`: a tenant's quotas (docs/operations.md, "Tenant
/// quotas").
extension TenantCommand {
    struct SetLimits: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-limits",
            abstract: "Set a tenant's quotas (each a whole number, or none to lift it); the others stay. Prints the limits after.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Option(name: .customLong("pushes-per-second"), help: "Pushes a second, all of the tenant's devices together.") var pushesPerSecond: String?
        @Option(name: .customLong("records-per-second"), help: "Changes a second in pushes.") var recordsPerSecond: String?
        @Option(name: .customLong("records-per-day"), help: "Changes in pushes per UTC day.") var recordsPerDay: String?
        @Option(help: "Open event streams, all users together.") var streams: String?
        @Option(name: .customLong("storage-rows"), help: "Stored rows; above it only pushes that delete are taken.") var storageRows: String?
        @Flag(help: "Print one JSON object.") var json = false

        /// The limits given, each checked against its range.
        func changes() throws -> [TenantLimits.Kind: Int64?] {
            let given: [(TenantLimits.Kind, String?)] = [
                (.pushesPerSecond, pushesPerSecond), (.recordsPerSecond, recordsPerSecond), (.recordsPerDay, recordsPerDay), (.streams, streams),
                (.storageRows, storageRows),
            ]
            var changes: [TenantLimits.Kind: Int64?] = [:]
            for case (let kind, let text?) in given {
                guard let value = TenantLimits.parse(text, for: kind) else {
                    throw ValidationError("--\(kind.flag) must be a whole number from \(kind.range.lowerBound) to \(kind.range.upperBound), or none; got \(text.debugDescription)")
                }
                changes[kind] = value
            }
            guard !changes.isEmpty else {
                throw ValidationError("give at least one limit: \(TenantLimits.Kind.allCases.map { "--\($0.flag)" }.joined(separator: ", "))")
            }
            return changes
        }

        func validate() throws { _ = try changes() }

        func run() async throws {
            let changes = try changes()
            let (found, limits) = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                let found = try await TenantStore(pool: pool).require(tenant)
                return (found, try await TenantLimitsStore(pool: pool).setLimits(tenantID: found.id, changes))
            }
            try TenantLimitsPrinter.print(found, limits, json: json)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a tenant: its id, name and quotas.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let (found, limits) = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                let found = try await TenantStore(pool: pool).require(tenant)
                return (found, try await TenantLimitsStore(pool: pool).limits(tenantID: found.id))
            }
            try TenantLimitsPrinter.print(found, limits, json: json)
        }
    }
}

/// A tenant with its limits, as `set-limits` and `show` print them.
enum TenantLimitsPrinter {
    static func print(_ tenant: Tenant, _ limits: TenantLimits, json: Bool) throws {
        if json {
            var object: [String: Any] = ["id": tenant.id.uuidString.lowercased(), "name": tenant.name]
            object["limits"] = Dictionary(uniqueKeysWithValues: TenantLimits.Kind.allCases.map { ($0.rawValue, limits[$0].map { $0 as Any } ?? NSNull()) })
            try JSONLine.print(object)
            return
        }
        Swift.print("tenant \(tenant.name) (\(tenant.id.uuidString.lowercased()))")
        for kind in TenantLimits.Kind.allCases {
            Swift.print("  \(kind.flag.padding(toLength: 20, withPad: " ", startingAt: 0)) \(limits[kind].map(String.init) ?? "none")")
        }
    }
}
