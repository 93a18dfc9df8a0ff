import ArgumentParser
import Foundation
import HabitSyncAuth
import HabitSyncStore

/// `tenant add-issuer | issuers | remove-issuer`: the identity providers whose tokens a tenant
/// accepts (docs/identity.md).
extension TenantCommand {
    struct AddIssuer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-issuer",
            abstract: "Accept an identity provider's tokens for the tenant; prints the issuer.",
            discussion: """
                Either --issuer URL with one of --jwks-url URL, --discover or --jwks-file FILE and at least one \
                --audience, or a preset: --preset firebase --project ID; --preset apple --bundle-id ID…; \
                --preset auth0 --domain D --audience A; --preset supabase --project-url URL; \
                --preset cognito --region R --user-pool ID [--audience CLIENT_ID…].
                """)

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Option(help: "The iss claim its tokens carry, exactly.") var issuer: String?
        @Option(name: .customLong("jwks-url"), help: "Where the provider publishes its keys (JWKS); with a preset, replaces the preset's.") var jwksURL: String?
        @Flag(help: "Find the keys through <issuer>/.well-known/openid-configuration.") var discover = false
        @Option(name: .customLong("jwks-file"), help: ArgumentHelp("A JWKS document or a PEM public key, stored with the configuration.", valueName: "file"))
        var jwksFile: String?
        @Option(help: "An accepted aud value (repeat for several).") var audience: [String] = []
        @Option(help: "An accepted algorithm: RS256, ES256, EdDSA (repeat for several). Default: RS256 and ES256, or the preset's.") var algorithm: [String] = []
        @Option(name: .customLong("user-claim"), help: "The claim naming the user. Default: sub.") var userClaim: String?
        @Option(name: .customLong("max-lifetime"), help: "Longest accepted token lifetime (exp - iat), 1m to 30d. Default: 24h.") var maxLifetime: String?
        @Option(help: "firebase, apple, auth0, supabase or cognito.") var preset: String?
        @Option(help: "--preset firebase: the Firebase project id.") var project: String?
        @Option(name: .customLong("bundle-id"), help: "--preset apple: an app's bundle id or Services ID (repeat for several).") var bundleID: [String] = []
        @Option(help: "--preset auth0: the tenant's domain, such as example.eu.auth0.com.") var domain: String?
        @Option(name: .customLong("project-url"), help: "--preset supabase: the project's URL, such as https://abcd.supabase.co.") var projectURL: String?
        @Option(help: "--preset cognito: the AWS region.") var region: String?
        @Option(name: .customLong("user-pool"), help: "--preset cognito: the user pool id.") var userPool: String?
        @Flag(help: "Print the configuration as one JSON object.") var json = false

        func configuration() throws -> IssuerConfiguration {
            var algorithms: [IssuerAlgorithm]?
            if !algorithm.isEmpty {
                algorithms = try algorithm.map {
                    guard let known = IssuerAlgorithm(rawValue: $0) else { throw ValidationError("--algorithm \($0.prefix(40)): must be RS256, ES256 or EdDSA") }
                    return known
                }
            }
            var lifetime: Int?
            if let maxLifetime {
                guard let duration = ConfigurationValue.duration(maxLifetime), IssuerRules.lifetimeRange.contains(Int(duration / .seconds(1))) else {
                    throw ValidationError("--max-lifetime '\(maxLifetime.prefix(40))': must be a duration from 1m to 30d, such as 24h")
                }
                lifetime = Int(duration / .seconds(1))
            }
            do {
                if let preset {
                    guard let known = IssuerPreset(rawValue: preset) else {
                        throw ValidationError("--preset \(preset.prefix(40)): must be one of \(IssuerPreset.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    guard issuer == nil, !discover, jwksFile == nil else { throw ValidationError("--preset sets the issuer and its keys; only --jwks-url may replace the keys' URL") }
                    var inputs = IssuerPreset.Inputs()
                    inputs.project = project
                    inputs.bundleIDs = bundleID
                    inputs.domain = domain
                    inputs.projectURL = projectURL
                    inputs.region = region
                    inputs.userPool = userPool
                    inputs.audiences = audience
                    return try known.configuration(inputs, jwksURL: jwksURL, algorithms: algorithms, userClaim: userClaim, maximumLifetime: lifetime)
                }
                guard project == nil, bundleID.isEmpty, domain == nil, projectURL == nil, region == nil, userPool == nil else {
                    throw ValidationError("--project, --bundle-id, --domain, --project-url, --region and --user-pool go with --preset")
                }
                guard let issuer else { throw ValidationError("give --issuer URL (or --preset)") }
                let keySource: IssuerConfiguration.KeySource
                switch (jwksURL, discover, jwksFile) {
                case (let url?, false, nil): keySource = .jwksURL(url)
                case (nil, true, nil): keySource = .discovery
                case (nil, false, let path?): keySource = .inline(try Self.readKeys(path))
                default: throw ValidationError("give exactly one of --jwks-url, --discover and --jwks-file")
                }
                return try IssuerConfiguration(
                    issuer: issuer, keySource: keySource, audiences: audience, algorithms: algorithms ?? [.rs256, .es256],
                    userClaim: userClaim ?? "sub", maximumLifetime: lifetime ?? IssuerConfiguration.defaultMaximumLifetime)
            } catch let error as IssuerConfigurationError {
                throw ValidationError(error.message)
            }
        }

        /// The file's text, once it is known to hold at least one usable key.
        static func readKeys(_ path: String) throws -> String {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path), let size = attributes[.size] as? Int,
                size <= IssuerRules.maximumInlineKeysBytes, let text = try? String(contentsOfFile: path, encoding: .utf8)
            else {
                throw ValidationError("--jwks-file: cannot read \(path), or it is larger than \(IssuerRules.maximumInlineKeysBytes) bytes")
            }
            return text
        }

        func run() async throws {
            let configuration = try configuration()
            if case .inline(let text) = configuration.keySource {
                do { _ = try await IssuerKeySet.parse(Array(text.utf8)) } catch { throw ValidationError("--jwks-file: \(error.message)") }
            }
            try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                let found = try await TenantStore(pool: pool).require(tenant)
                try await IssuerStore(pool: pool).add(tenantID: found.id, configuration)
            }
            guard json else {
                print(configuration.issuer)
                return
            }
            try JSONLine.print(IssuerDescription.object(configuration))
        }
    }

    struct Issuers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the identity providers whose tokens the tenant accepts.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Flag(help: "Print a JSON array instead of a table.") var json = false

        func run() async throws {
            let issuers = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await IssuerStore(pool: pool).list(tenantID: try await TenantStore(pool: pool).require(tenant).id)
            }
            if json {
                try JSONLine.print(issuers.map { IssuerDescription.object($0.configuration) })
                return
            }
            print("ISSUER  KEYS  AUDIENCES  ALGORITHMS  USER_CLAIM  MAX_LIFETIME  PRESET")
            for issuer in issuers.map(\.configuration) {
                let audiences = issuer.audiences.isEmpty ? "(any)" : issuer.audiences.joined(separator: ",")
                print(
                    "\(issuer.issuer)  \(IssuerDescription.keys(issuer.keySource))  \(audiences)  \(issuer.algorithms.map(\.rawValue).joined(separator: ","))  "
                        + "\(issuer.userClaim)  \(issuer.maximumLifetime)s  \(issuer.preset?.rawValue ?? "-")")
            }
        }
    }

    struct RemoveIssuer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-issuer",
            abstract: "Stop accepting an identity provider's tokens for the tenant (within the servers' 10 s cache).")

        @OptionGroup var common: CommonOptions
        @Argument(help: "Tenant id or name.") var tenant: String
        @Argument(help: "The issuer, as tenant issuers prints it.") var issuer: String

        func run() async throws {
            try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server tenant") { pool in
                try await IssuerStore(pool: pool).remove(tenantID: try await TenantStore(pool: pool).require(tenant).id, issuer: issuer)
            }
        }
    }
}

/// An issuer configuration as the CLI prints it.
enum IssuerDescription {
    static func keys(_ source: IssuerConfiguration.KeySource) -> String {
        switch source {
        case .jwksURL(let url): url
        case .discovery: "discovery"
        case .inline: "inline"
        }
    }

    static func object(_ configuration: IssuerConfiguration) -> [String: Any] {
        var object: [String: Any] = [
            "issuer": configuration.issuer, "audiences": configuration.audiences,
            "audienceClaims": configuration.audienceClaims.map(\.rawValue), "algorithms": configuration.algorithms.map(\.rawValue),
            "userClaim": configuration.userClaim, "maxLifetimeSeconds": configuration.maximumLifetime,
        ]
        switch configuration.keySource {
        case .jwksURL(let url): object["keys"] = ["source": "jwks_url", "url": url]
        case .discovery: object["keys"] = ["source": "discovery", "url": configuration.discoveryURL]
        case .inline: object["keys"] = ["source": "inline"]
        }
        if let preset = configuration.preset { object["preset"] = preset.rawValue }
        return object
    }
}
