import ArgumentParser
import Foundation
import HabitSyncAuth
import HabitSyncStore

/// `habitsync-server token mint`: a JWT for development and tests, signed with a tenant's
/// HS256 key, or as an identity provider would sign it (`--signing-key`).
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Access tokens for development.",
        subcommands: [Mint.self])

    struct Mint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign a token with the tenant's HS256 key, or with --signing-key as an identity provider would; prints the token.")

        @OptionGroup var common: CommonOptions
        @Option(help: "Tenant id or name (a tid token signed with the tenant's HS256 key).") var tenant: String?
        @Option(help: "User id (the sub claim).") var user: String
        @Option(help: "Lifetime, e.g. 1h or 15m.") var ttl: String = "1h"
        @Option(
            name: .customLong("signing-key"), help: ArgumentHelp("PEM private key (P-256 or RSA): sign as an identity provider, with --issuer and --audience, instead of --tenant.", valueName: "file"))
        var signingKey: String?
        @Option(help: "With --signing-key: the iss claim.") var issuer: String?
        @Option(help: "With --signing-key: the aud claim.") var audience: String?
        @Option(help: "With --signing-key: the kid header.") var kid: String?
        @Flag(help: "Print one JSON object instead of the token.") var json = false

        func validate() throws {
            if let problem = SubjectRules.problem(user) { throw ValidationError("--user \(problem)") }
            guard ConfigurationValue.duration(ttl) != nil else { throw ValidationError("--ttl '\(ttl)': must be a duration such as 1h") }
            switch (tenant, signingKey) {
            case (nil, nil): throw ValidationError("give --tenant, or --signing-key with --issuer and --audience")
            case (_?, _?): throw ValidationError("give --tenant or --signing-key, not both")
            case (nil, _?):
                guard let issuer, IssuerRules.problem(issuer: issuer) == nil else { throw ValidationError("--signing-key needs --issuer, an https:// URL") }
                guard let audience, IssuerRules.problem(audiences: [audience]) == nil else { throw ValidationError("--signing-key needs --audience") }
            case (_?, nil):
                guard issuer == nil, audience == nil, kid == nil else { throw ValidationError("--issuer, --audience and --kid go with --signing-key") }
            }
        }

        func run() async throws {
            guard let duration = ConfigurationValue.duration(ttl) else { throw ValidationError("--ttl '\(ttl)': must be a duration such as 1h") }
            let seconds = duration / .seconds(1)
            if let signingKey, let issuer, let audience {
                guard let pem = try? String(contentsOfFile: signingKey, encoding: .utf8) else { throw ValidationError("--signing-key: cannot read \(signingKey)") }
                let token = try await TokenMinter.mintAsIssuer(issuer: issuer, audience: audience, userID: user, privateKeyPEM: pem, keyID: kid, ttl: seconds)
                guard json else {
                    print(token)
                    return
                }
                try JSONLine.print(["token": token, "issuer": issuer, "audience": audience, "user": user, "expiresIn": Int(seconds)] as [String: Any])
                return
            }
            guard let tenant else { throw ValidationError("give --tenant") }
            let (tenantID, key) = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server token") { pool in
                let store = TenantStore(pool: pool)
                let found = try await store.require(tenant)
                return (found.id, try await store.signingKey(tenantID: found.id))
            }
            let token = try await TokenMinter.mint(tenantID: tenantID, userID: user, key: key, ttl: seconds)
            guard json else {
                print(token)
                return
            }
            let object: [String: Any] = ["token": token, "tenantId": tenantID.uuidString.lowercased(), "user": user, "expiresIn": Int(seconds)]
            try JSONLine.print(object)
        }
    }
}
