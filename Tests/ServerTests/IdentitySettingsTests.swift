import ArgumentParser
import Foundation
import GuardedFetch
import HabitSyncServer
import Testing

@testable import HabitSyncCLI

/// `serve`'s identity-provider flags: defaults, values, environment, and refusals that name
/// the flag.
@Suite struct IdentitySettingsTests {
    @Test func theIssuerFlagsReachTheServerConfiguration() throws {
        let defaults = try ServeCommand.parse([]).resolveSettings().server.identity
        #expect(defaults == IdentitySettings())
        #expect(defaults.fetch.allowLoopbackHTTP == false && defaults.fetch.allowPrivateAddresses == false)

        let set = try ServeCommand.parse([
            "--issuer-key-refresh", "2m", "--issuer-unknown-key-refresh", "30s", "--issuer-key-max-staleness", "6h",
            "--issuer-fetch-timeout", "250ms", "--issuer-private-addresses", "allow", "--issuer-loopback-http", "allow",
        ]).resolveSettings().server.identity
        #expect(set.refreshInterval == .seconds(120))
        #expect(set.unknownKeyRefreshInterval == .seconds(30))
        #expect(set.maximumStaleness == .seconds(21_600))
        #expect(set.fetch.timeout == .milliseconds(250))
        #expect(set.fetch.allowPrivateAddresses && set.fetch.allowLoopbackHTTP)

        for (flag, value) in [
            ("--issuer-key-refresh", "soon"), ("--issuer-fetch-timeout", "5m"), ("--issuer-fetch-timeout", "1e308"),
            ("--issuer-private-addresses", "yes"), ("--issuer-loopback-http", "allow\n"),
        ] {
            #expect {
                try ServeCommand.parse([flag, value]).resolveSettings()
            } throws: { error in
                String(describing: error).contains(String(flag.dropFirst(2)))
            }
        }
    }
}
