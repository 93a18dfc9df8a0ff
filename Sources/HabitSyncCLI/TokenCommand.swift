import ArgumentParser
import Foundation
import HabitSyncAuth
import HabitSyncStore

/// `habitsync-server token mint`: a JWT for development and tests (HS256 tenants).
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Access tokens for development.",
        subcommands: [Mint.self])

    struct Mint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sign a token with the tenant's HS256 key; prints the token.")

        @OptionGroup var common: CommonOptions
        @Option(help: "Tenant id or name.") var tenant: String
        @Option(help: "User id (the sub claim).") var user: String
        @Option(help: "Lifetime, e.g. 1h or 15m.") var ttl: String = "1h"
        @Flag(help: "Print one JSON object instead of the token.") var json = false

        func validate() throws {
            if let problem = SubjectRules.problem(user) { throw ValidationError("--user \(problem)") }
            guard ConfigurationValue.duration(ttl) != nil else { throw ValidationError("--ttl '\(ttl)': must be a duration such as 1h") }
        }

        func run() async throws {
            guard let duration = ConfigurationValue.duration(ttl) else { throw ValidationError("--ttl '\(ttl)': must be a duration such as 1h") }
            let seconds = duration / .seconds(1)
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
