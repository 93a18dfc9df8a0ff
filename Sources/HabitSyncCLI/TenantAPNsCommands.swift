import ArgumentParser
import Foundation
import HabitSyncStore

/// `habitsync-server tenant set-apns | apns | remove-apns`: a tenant's APNs key, for the
/// background wakes of its users' iPhones (docs/operations.md, "Waking iPhones").
extension TenantCommand {
    struct SetAPNs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-apns",
            abstract: "Set a tenant's APNs token-auth key: its users' other devices are woken (a silent push) when one of their devices pushes a change.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Option(name: .customLong("key-file"), help: ArgumentHelp("The .p8 file Apple gave for the key.", valueName: "file")) var keyFile: String
        @Option(name: .customLong("key-id"), help: "The key's id (10 characters, in the developer account).") var keyID: String
        @Option(name: .customLong("team-id"), help: "The developer team's id (10 characters).") var teamID: String
        @Option(help: "The app's bundle id (apns-topic).") var topic: String
        @Option(help: "sandbox (development builds) or production.") var environment: String
        @Option(name: .customLong("wake-interval"), help: "At most one wake per device this often (1s to 86400s; default 60s).") var wakeInterval: String = "60s"

        func settings() throws -> APNsSettings {
            let size = (try? FileManager.default.attributesOfItem(atPath: keyFile)[.size] as? Int) ?? nil
            guard let size, size <= 4096, let key = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
                throw ValidationError("--key-file: cannot read \(keyFile) (the .p8 file, a few hundred bytes)")
            }
            guard let environment = APNsSettings.Environment(rawValue: environment) else { throw ValidationError("--environment: sandbox or production") }
            guard let interval = ConfigurationValue.duration(wakeInterval) else { throw ValidationError("--wake-interval: a duration such as 60s or 5m") }
            do {
                return try APNsSettings(
                    keyID: keyID, teamID: teamID, topic: topic, environment: environment,
                    signingKey: key.trimmingCharacters(in: .whitespacesAndNewlines) + "\n", wakeInterval: interval)
            } catch {
                throw ValidationError(error.description)
            }
        }

        func validate() throws { _ = try settings() }

        func run() async throws {
            let settings = try settings()
            let found = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                let found = try await TenantStore(pool: pool).require(tenant)
                try await TenantAPNsStore(pool: pool).set(tenant: found.id, settings)
                return found
            }
            print("APNs key \(settings.keyID) set for tenant \(found.name) (\(settings.environment.rawValue), topic \(settings.topic))")
        }
    }

    struct APNs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "apns", abstract: "Show a tenant's APNs settings (never the key) and how many devices have a token.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let shown = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await TenantAPNsStore(pool: pool).shown(tenant: try await TenantStore(pool: pool).require(tenant).id)
            }
            guard let shown else { throw CLIFailure(message: "the tenant has no APNs key (tenant set-apns sets one)") }
            if json {
                try JSONLine.print([
                    "keyId": shown.keyID, "teamId": shown.teamID, "topic": shown.topic, "environment": shown.environment,
                    "wakeIntervalSeconds": shown.wakeIntervalSeconds, "devices": shown.devices,
                ])
            } else {
                print("key \(shown.keyID)  team \(shown.teamID)  topic \(shown.topic)  \(shown.environment)  wake at most every \(shown.wakeIntervalSeconds)s  devices with a token \(shown.devices)")
            }
        }
    }

    struct RemoveAPNs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-apns", abstract: "Remove a tenant's APNs key: no more wakes (its devices' tokens stay).")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String

        func run() async throws {
            let removed = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await TenantAPNsStore(pool: pool).remove(tenant: try await TenantStore(pool: pool).require(tenant).id)
            }
            guard removed else { throw CLIFailure(message: "the tenant has no APNs key") }
            print("removed")
        }
    }
}
