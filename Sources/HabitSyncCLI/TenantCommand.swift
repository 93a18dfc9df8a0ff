import ArgumentParser
import Foundation
import HabitSyncAuth
import HabitSyncStore

/// `habitsync-server tenant create | list | show | set-limits | usage | rotate-key | erase | add-issuer | issuers | remove-issuer`.
struct TenantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant",
        abstract: "Manage tenants and their JWT keys.",
        subcommands: [
            Create.self, List.self, Show.self, SetLimits.self, Usage.self, RotateKey.self, Erase.self, AddIssuer.self, Issuers.self, RemoveIssuer.self,
            AddWebhook.self, Webhooks.self, RemoveWebhook.self, PauseWebhook.self, ResumeWebhook.self, WebhookDeliveries.self, Redeliver.self,
            SetAPNs.self, APNs.self, RemoveAPNs.self,
        ])

    /// Key options shared by create and rotate-key.
    struct KeyOptions: ParsableArguments {
        @Option(name: .customLong("hs256-secret"), help: ArgumentHelp("HS256 shared secret (at least 32 bytes). Default: a random one.", valueName: "secret"))
        var hs256Secret: String?

        @Option(name: .customLong("public-key"), help: ArgumentHelp("PEM file of an ES256 (P-256) or RS256 public key, instead of a shared secret.", valueName: "file"))
        var publicKeyFile: String?

        func key() throws -> (TenantKey, generated: Bool) {
            switch (hs256Secret, publicKeyFile) {
            case (_?, _?):
                throw ValidationError("give --hs256-secret or --public-key, not both")
            case (let secret?, nil):
                return (try TenantKey(algorithm: .hs256, material: .sharedSecret(Array(secret.utf8))), false)
            case (nil, let path?):
                guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { throw ValidationError("--public-key: cannot read \(path)") }
                return (try TenantKey.publicKey(pem: pem), false)
            case (nil, nil):
                return (TenantKey.generatedSecret(), true)
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a tenant; prints its id (the JWT tid claim).")

        @OptionGroup var common: CommonOptions
        @OptionGroup var keyOptions: KeyOptions
        @Argument(help: "A unique name.") var name: String
        @Option(name: .customLong("daily-completion-xp"), help: "XP for each complete day (0 turns daily awards off).") var dailyCompletionXP = 50
        @Flag(help: "Print one JSON object (with a generated secret, if any) instead of the id.") var json = false

        func validate() throws {
            guard (1...200).contains(name.trimmingCharacters(in: .whitespaces).count) else { throw ValidationError("the name must be 1–200 characters") }
            guard (0...100_000).contains(dailyCompletionXP) else { throw ValidationError("--daily-completion-xp must be 0–100000") }
        }

        func run() async throws {
            let (key, generated) = try keyOptions.key()
            let tenant = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await TenantStore(pool: pool).create(name: name, key: key, dailyCompletionXP: dailyCompletionXP)
            }
            guard json else {
                print(tenant.id.uuidString.lowercased())
                return
            }
            var object: [String: Any] = [
                "tenantId": tenant.id.uuidString.lowercased(), "name": tenant.name, "keyId": key.id.uuidString.lowercased(),
                "algorithm": key.algorithm.rawValue, "dailyCompletionXP": tenant.dailyCompletionXP,
            ]
            if generated, case .sharedSecret(let secret) = key.material {
                object["hs256Secret"] = Data(secret).base64EncodedString()
                object["hs256SecretEncoding"] = "base64"
            }
            try JSONLine.print(object)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenants.")

        @OptionGroup var common: CommonOptions
        @Flag(help: "Print a JSON array instead of a table.") var json = false

        func run() async throws {
            let tenants = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await TenantStore(pool: pool).list()
            }
            if json {
                let objects: [[String: Any]] = tenants.map {
                    [
                        "id": $0.id.uuidString.lowercased(), "name": $0.name, "dailyCompletionXP": $0.dailyCompletionXP,
                        "disabled": $0.disabled, "keys": $0.activeKeyAlgorithms.map(\.rawValue),
                        "createdAt": ISO8601DateFormatter().string(from: $0.createdAt),
                    ]
                }
                try JSONLine.print(objects)
                return
            }
            print("ID                                    NAME  KEYS  DAILY_XP")
            for tenant in tenants {
                print(
                    "\(tenant.id.uuidString.lowercased())  \(tenant.name)  \(tenant.activeKeyAlgorithms.map(\.rawValue).joined(separator: ","))  \(tenant.dailyCompletionXP)\(tenant.disabled ? "  (disabled)" : "")"
                )
            }
        }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Add a new key and retire the tenant's others after a grace period; prints the new key id.")

        @OptionGroup var common: CommonOptions
        @OptionGroup var keyOptions: KeyOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Option(help: "How long the old keys keep verifying tokens, e.g. 1h (0 = retire now).") var grace: String = "0"
        @Flag(help: "Print one JSON object (with a generated secret, if any).") var json = false

        func run() async throws {
            let graceSeconds: TimeInterval
            if grace == "0" {
                graceSeconds = 0
            } else if let duration = ConfigurationValue.duration(grace) {
                graceSeconds = duration / .seconds(1)
            } else {
                throw ValidationError("--grace '\(grace)': must be a duration such as 1h, 30m or 0")
            }
            let (key, generated) = try keyOptions.key()
            try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await TenantStore(pool: pool).rotateKey(tenant: tenant, to: key, grace: graceSeconds)
            }
            guard json else {
                print(key.id.uuidString.lowercased())
                return
            }
            var object: [String: Any] = ["keyId": key.id.uuidString.lowercased(), "algorithm": key.algorithm.rawValue]
            if generated, case .sharedSecret(let secret) = key.material {
                object["hs256Secret"] = Data(secret).base64EncodedString()
                object["hs256SecretEncoding"] = "base64"
            }
            try JSONLine.print(object)
        }
    }

    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase every user of a tenant, its keys and the tenant itself; prints rows per table.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Flag(name: .customLong("dry-run"), help: "Count what would be erased and change nothing.") var dryRun = false
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let report = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await AccountStore(pool: pool).eraseTenant(try await TenantStore(pool: pool).require(tenant).id, dryRun: dryRun)
            }
            try ErasureReportPrinter.print(report, json: json)
        }
    }
}
