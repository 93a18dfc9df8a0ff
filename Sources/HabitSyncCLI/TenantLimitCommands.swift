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

extension TenantCommand {
    struct Usage: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what a tenant used per UTC day (docs/analytics.md, \"Tenant usage\"): pushes, changes, pulls, bytes.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Option(help: "First day, yyyy-MM-dd (default: 30 days before --to).") var from: String?
        @Option(help: "Last day, yyyy-MM-dd (default: today, UTC).") var to: String?
        @Flag(help: "Print a JSON array.") var json = false

        func days() throws -> (from: LocalDate, to: LocalDate) {
            func day(_ text: String?, _ flag: String) throws -> LocalDate? {
                guard let text else { return nil }
                guard let date = LocalDate(text, years: LocalDate.recordYears) else {
                    throw ValidationError("--\(flag) must be a date yyyy-MM-dd of years 1970–9999; got \(text.debugDescription)")
                }
                return date
            }
            let last = try day(to, "to") ?? LocalDate(Date(), in: .gmt)
            let first = try day(from, "from") ?? last.adding(days: -29)
            guard first <= last, last.dayNumber - first.dayNumber < 3660 else { throw ValidationError("--from must be on or before --to, at most ten years before") }
            return (first, last)
        }

        func validate() throws { _ = try days() }

        func run() async throws {
            let (first, last) = try days()
            let days = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                let found = try await TenantStore(pool: pool).require(tenant)
                return try await TenantUsageStore(pool: pool).usage(tenant: found.id, from: first, to: last)
            }
            if json {
                try JSONLine.print(
                    days.map { day, usage -> [String: Any] in
                        [
                            "day": day.description, "pushes": usage.pushes, "changesReceived": usage.changesReceived, "changesApplied": usage.changesApplied,
                            "pushesRefused": usage.pushesRefused, "pulls": usage.pulls, "bytesIn": usage.bytesIn, "bytesOut": usage.bytesOut,
                            "activeUsers": usage.activeUsers, "activeDevices": usage.activeDevices, "storedRows": usage.storedRows.map { $0 as Any } ?? NSNull(),
                        ]
                    })
                return
            }
            print("DAY         PUSHES  CHANGES_RECEIVED  CHANGES_APPLIED  REFUSED  PULLS  BYTES_IN  BYTES_OUT  USERS  DEVICES  STORED_ROWS")
            for (day, usage) in days {
                print(
                    [
                        day.description, String(usage.pushes), String(usage.changesReceived), String(usage.changesApplied), String(usage.pushesRefused),
                        String(usage.pulls), String(usage.bytesIn), String(usage.bytesOut), String(usage.activeUsers), String(usage.activeDevices),
                        usage.storedRows.map(String.init) ?? "-",
                    ].joined(separator: "  "))
            }
        }
    }
}
