import Foundation
import GuardedFetch
import HabitSyncAuth
import HabitSyncServer
import HabitSyncStore
import JWTKit
import LibPQClient
import Logging
import Synchronization
import TestSupport
import Testing

/// Tokens of identity providers, verified as requests verify them: configurations read
/// through the request role from a real database, keys fetched from a real key server on
/// loopback (plain HTTP, which only the tests allow).
@Suite struct IssuerVerificationTests {
    /// Refusals are logged at info; a thousand of them need not fill the suite's output.
    static let logger: Logger = {
        var logger = Logger(label: "issuer-tests")
        logger.logLevel = .warning
        return logger
    }()

    /// A database, a key server, and an authenticator as the server builds it.
    struct Fixture {
        let database: TestDatabase
        let keys: LoopbackKeyServer

        /// `cacheLifetime` zero: every token reads the configurations, so a removal shows at once.
        func run<T: Sendable>(
            settings: IdentitySettings = Fixture.settings(), cacheLifetime: Duration = .zero,
            _ body: (IssuerStore, TenantStore, Authenticator) async throws -> T
        ) async throws -> T {
            try await database.withPool(size: 2) { owner in
                try await database.withPool(size: 2, role: "habitsync_app") { app in
                    let cache = IssuerKeyCache(settings: settings, logger: IssuerVerificationTests.logger)
                    let authenticator = Authenticator(tenants: TenantStore(pool: app), issuers: IssuerStore(pool: app), issuerKeys: cache, cacheLifetime: cacheLifetime)
                    return try await body(IssuerStore(pool: owner), TenantStore(pool: owner), authenticator)
                }
            }
        }

        /// Loopback HTTP allowed; no background refresh and no second unknown-kid fetch within
        /// a test, so fetch counts do not depend on how long the test takes; and a fetch
        /// timeout no busy machine reaches (the key server runs in this process, which a loaded
        /// machine starved past the default 5 s).
        static func settings() -> IdentitySettings {
            var settings = IdentitySettings()
            settings.fetch.allowLoopbackHTTP = true
            settings.fetch.timeout = .seconds(120)
            settings.refreshInterval = .seconds(3600)
            settings.unknownKeyRefreshInterval = .seconds(3600)
            settings.failureBackoff = .zero
            return settings
        }
    }

    static func withFixture<T: Sendable>(_ body: (Fixture) async throws -> T) async throws -> T {
        let database = try await TestPostgres.shared.migratedDatabase()
        let keys = try await LoopbackKeyServer.start()
        do {
            let result = try await body(Fixture(database: database, keys: keys))
            await keys.stop()
            return result
        } catch {
            await keys.stop()
            throw error
        }
    }

    static func tenant(_ tenants: TenantStore, _ name: String) async throws -> UUID {
        try await tenants.create(name: name, key: TenantKey.generatedSecret()).id
    }

    /// A tenant that accepts `https://login.example.com` tokens for `habits`, keys from the key server.
    static func acceptLogin(_ issuers: IssuerStore, _ tenants: TenantStore, _ name: String, _ fixture: Fixture) async throws {
        try await issuers.add(
            tenantID: try await tenant(tenants, name),
            try IssuerConfiguration(
                issuer: "https://login.example.com", keySource: .jwksURL(fixture.keys.jwksURL), audiences: ["habits"]))
    }

    static func outcome(_ authenticator: Authenticator, _ token: String) async throws -> Result<VerifiedIdentity, AuthenticationFailure> {
        try await authenticator.identify(authorization: "Bearer \(token)", logger: logger)
    }

    static func code(_ authenticator: Authenticator, _ token: String) async throws -> String {
        switch try await outcome(authenticator, token) {
        case .success: "ok"
        case .failure(let failure): failure.code.rawValue
        }
    }

    @Test func tokensShapedLikeEachPresetsVerifyAsTheirTenantAndUser() async throws {
        try await Self.withFixture { fixture in
            let rsa = try await TestProvider.rsa(kid: "rsa-1")
            let ec = try await TestProvider.ec(kid: "ec-1")
            fixture.keys.serve(jwks: TestProvider.jwks([rsa, ec]))
            try await fixture.run { issuers, tenants, authenticator in
                var inputs = IssuerPreset.Inputs()
                let now = Date()
                // (preset, inputs, signing key, the provider's claims, the user they name)
                var cases: [(IssuerPreset, IssuerPreset.Inputs, TestProvider.SigningKey, [String: TestClaim], String)] = []

                inputs = .init(); inputs.project = "habit-app-1234"
                var firebase = TestProvider.claims(issuer: "https://securetoken.google.com/habit-app-1234", audience: "habit-app-1234", user: "fbUID0123456789")
                firebase["user_id"] = .string("fbUID0123456789")
                firebase["auth_time"] = .number(now.timeIntervalSince1970)
                firebase["firebase"] = .object(["sign_in_provider": "password"])
                cases.append((.firebase, inputs, rsa, firebase, "fbUID0123456789"))

                inputs = .init(); inputs.bundleIDs = ["com.example.habits", "com.example.habits.watch"]
                var apple = TestProvider.claims(issuer: "https://appleid.apple.com", audience: "com.example.habits.watch", user: "001234.abcdef0123456789.0123")
                apple["email"] = .string("relay@privaterelay.appleid.com")
                cases.append((.apple, inputs, rsa, apple, "001234.abcdef0123456789.0123"))

                inputs = .init(); inputs.domain = "habits.eu.auth0.com"; inputs.audiences = ["https://api.habits.example"]
                var auth0 = TestProvider.claims(issuer: "https://habits.eu.auth0.com/", audience: "", user: "auth0|5f1c2a9e")
                auth0["aud"] = .strings(["https://api.habits.example", "https://habits.eu.auth0.com/userinfo"])
                auth0["scope"] = .string("openid profile")
                cases.append((.auth0, inputs, rsa, auth0, "auth0|5f1c2a9e"))

                inputs = .init(); inputs.projectURL = "https://abcdefghijklmnop.supabase.co"
                var supabase = TestProvider.claims(issuer: "https://abcdefghijklmnop.supabase.co/auth/v1", audience: "authenticated", user: "4f0c2f8e-8a59-4b67-9d42-6c9e1d0b7a11")
                supabase["role"] = .string("authenticated")
                cases.append((.supabase, inputs, ec, supabase, "4f0c2f8e-8a59-4b67-9d42-6c9e1d0b7a11"))

                inputs = .init(); inputs.region = "eu-west-1"; inputs.userPool = "eu-west-1_AbCdEf123"
                // A Cognito access token: no aud, the app client in client_id.
                var cognito = TestProvider.claims(issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123", audience: "", user: "7d8e9f00-1111-2222-3333-444455556666")
                cognito["aud"] = nil
                cognito["client_id"] = .string("3n4b5urk1ft4fl3mg5e62d9ado")
                cognito["token_use"] = .string("access")
                cases.append((.cognito, inputs, rsa, cognito, "7d8e9f00-1111-2222-3333-444455556666"))

                for (preset, inputs, key, claims, user) in cases {
                    let tenantID = try await Self.tenant(tenants, "app-\(preset.rawValue)")
                    let configuration = try preset.configuration(inputs, jwksURL: fixture.keys.jwksURL)
                    try await issuers.add(tenantID: tenantID, configuration)
                    let token = try await TestProvider.token(claims, key: key)
                    let identity = try await Self.outcome(authenticator, token).get()
                    #expect(identity.tenantID == tenantID, "\(preset)")
                    #expect(identity.userID == user, "\(preset)")
                }
                // All five share the key server: its keys were fetched once, not once per tenant.
                #expect(fixture.keys.requests("/jwks.json") == 1)
            }
        }
    }

    @Test func aRotatedKeyVerifiesOnItsFirstRequestAndAnOutageKeepsKnownKeysWorking() async throws {
        try await Self.withFixture { fixture in
            let old = try await TestProvider.rsa(kid: "2026-10")
            let new = try await TestProvider.rsa(kid: "2026-11", other: true)
            fixture.keys.serve(jwks: TestProvider.jwks([old]))
            // Background refresh on every request, so the outage below is really tried.
            var settings = Fixture.settings()
            settings.refreshInterval = .zero
            try await fixture.run(settings: settings) { issuers, tenants, authenticator in
                try await Self.acceptLogin(issuers, tenants, "rotating", fixture)
                let claims = TestProvider.claims(issuer: "https://login.example.com", audience: "habits", user: "ann")
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: old)) == "ok")

                // The provider rotates: it publishes the new key and signs with it at once.
                fixture.keys.serve(jwks: TestProvider.jwks([new]))
                let before = fixture.keys.requests("/jwks.json")
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: new)) == "ok", "the first token of the new kid")
                #expect(fixture.keys.requests("/jwks.json") > before)

                // The provider goes down: the known key keeps verifying, request after request,
                // while the refreshes it triggers fail.
                fixture.keys.setDown(true)
                let downSince = fixture.keys.requests("/jwks.json")
                for _ in 0..<5 {
                    #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: new)) == "ok")
                }
                // A fetch is under way or done for each request at most; wait for one to have failed.
                for _ in 0..<3000 where fixture.keys.requests("/jwks.json") == downSince { try await Task.sleep(for: .milliseconds(20)) }
                #expect(fixture.keys.requests("/jwks.json") > downSince, "a refresh was tried while the provider was down")
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: new)) == "ok", "after a failed refresh")
                fixture.keys.setDown(false)
            }
        }
    }

    @Test func aFloodOfMadeUpKidsCostsOneFetch() async throws {
        try await Self.withFixture { fixture in
            let key = try await TestProvider.ec(kid: "real")
            fixture.keys.serve(jwks: TestProvider.jwks([key]))
            // Configurations cached as the server caches them: the flood costs no database reads.
            try await fixture.run(cacheLifetime: .seconds(3600)) { issuers, tenants, authenticator in
                try await Self.acceptLogin(issuers, tenants, "flooded", fixture)
                let claims = TestProvider.claims(issuer: "https://login.example.com", audience: "habits", user: "ann")
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: key)) == "ok")
                #expect(fixture.keys.requests("/jwks.json") == 1)

                var tokens: [String] = []
                for _ in 0..<1000 { tokens.append(try await TestProvider.token(claims, key: key, kid: UUID().uuidString)) }
                let codes = try await withThrowingTaskGroup(of: [String].self) { group in
                    for slice in stride(from: 0, to: tokens.count, by: 100) {
                        let part = Array(tokens[slice..<slice + 100])
                        group.addTask {
                            var codes: [String] = []; for token in part { codes.append(try await Self.code(authenticator, token)) }; return codes
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(codes.count == 1000)
                #expect(Set(codes) == ["unknown_key"])
                // One refresh for the first unknown kid; the other 999 within the interval fetch nothing.
                #expect(fixture.keys.requests("/jwks.json") == 2)
            }
        }
    }

    @Test func eachWrongTokenIsRefusedWithItsOwnCode() async throws {
        try await Self.withFixture { fixture in
            let rsa = try await TestProvider.rsa(kid: "rsa")
            let ec = try await TestProvider.ec(kid: "ec")
            let ed = try await TestProvider.ed25519(kid: "ed")
            let stranger = try await TestProvider.rsa(kid: "rsa", other: true)  // same kid, another key
            fixture.keys.serve(jwks: TestProvider.jwks([rsa, ec, ed]))
            try await fixture.run { issuers, tenants, authenticator in
                let tenantID = try await Self.tenant(tenants, "strict")
                try await issuers.add(
                    tenantID: tenantID,
                    try IssuerConfiguration(
                        issuer: "https://login.example.com", keySource: .jwksURL(fixture.keys.jwksURL), audiences: ["habits"],
                        algorithms: [.rs256, .eddsa], maximumLifetime: 3600))
                let iss = "https://login.example.com"
                let good = TestProvider.claims(issuer: iss, audience: "habits", user: "ann", lifetime: 600)
                #expect(try await Self.code(authenticator, try await TestProvider.token(good, key: rsa)) == "ok")
                #expect(try await Self.code(authenticator, try await TestProvider.token(good, key: ed)) == "ok", "EdDSA")

                var claims = good; claims["iss"] = .string("https://login.example.org")
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: rsa)) == "unknown_issuer")
                claims = good; claims["aud"] = .string("other-app")
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: rsa)) == "audience_mismatch")
                claims = good; claims["aud"] = nil
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: rsa)) == "audience_mismatch")
                let past = Date().addingTimeInterval(-7200)
                #expect(
                    try await Self.code(
                        authenticator,
                        try await TestProvider.token(
                            TestProvider.claims(issuer: iss, audience: "habits", user: "ann", now: past, lifetime: 600), key: rsa)) == "token_expired")
                #expect(
                    try await Self.code(
                        authenticator,
                        try await TestProvider.token(
                            TestProvider.claims(issuer: iss, audience: "habits", user: "ann", lifetime: 86_400 * 30), key: rsa)) == "lifetime_too_long")
                claims = good; claims["iat"] = nil; claims["exp"] = .number(1e308)
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: rsa)) == "lifetime_too_long", "1e308 without iat")
                claims = good; claims["exp"] = .string("tomorrow")
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: rsa)) == "token_invalid")
                claims = good; claims["sub"] = nil
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: rsa)) == "token_invalid")
                claims = good; claims["sub"] = .string("ann\n")
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: rsa)) == "token_invalid")

                // ES256 is a key the issuer publishes, but not an algorithm its tenant accepts.
                #expect(try await Self.code(authenticator, try await TestProvider.token(good, key: ec)) == "algorithm_not_allowed")
                // none, and HS256 made with the RSA key's public bytes as the secret.
                let payload: [String: Any] = ["iss": iss, "aud": "habits", "sub": "ann", "iat": Date().timeIntervalSince1970, "exp": Date().timeIntervalSince1970 + 600]
                #expect(try await Self.code(authenticator, TestProvider.unsigned(header: ["alg": "none", "kid": "rsa"], claims: payload)) == "algorithm_not_allowed")
                let confused = await JWTKeyCollection().add(hmac: HMACKey(from: Array((rsa.jwk["n"] ?? "").utf8)), digestAlgorithm: .sha256)
                let hs256 = try await confused.sign(
                    TestClaims(values: good),
                    header: {
                        var h = JWTHeader(); h.kid = "rsa"; return h
                    }())
                #expect(try await Self.code(authenticator, hs256) == "algorithm_not_allowed")
                // RS256 in the header, the Ed25519 key's kid: the key does not fit the algorithm.
                #expect(try await Self.code(authenticator, try await TestProvider.token(good, key: rsa, kid: "ed")) == "algorithm_not_allowed")
                // Another RSA key under the published kid, and a payload changed after signing.
                #expect(try await Self.code(authenticator, try await TestProvider.token(good, key: stranger)) == "signature_invalid")
                let signed = try await TestProvider.token(good, key: rsa).split(separator: ".")
                var changed = good; changed["sub"] = .string("mallory")
                let forgedPayload = try JSONEncoder().encode(TestClaims(values: changed)).base64URL
                #expect(try await Self.code(authenticator, "\(signed[0]).\(forgedPayload).\(signed[2])") == "signature_invalid")
                // No kid, and two keys fit RS256? One does here: it is chosen. A made-up kid: unknown.
                #expect(try await Self.code(authenticator, try await TestProvider.token(good, key: rsa, kid: .some(nil))) == "ok")
                #expect(try await Self.code(authenticator, try await TestProvider.token(good, key: rsa, kid: "gone")) == "unknown_key")
            }
        }
    }

    @Test func twoTenantsOfOneProviderStayApartByAudience() async throws {
        try await Self.withFixture { fixture in
            let key = try await TestProvider.rsa(kid: "shared")
            fixture.keys.serve(jwks: TestProvider.jwks([key]))
            try await fixture.run { issuers, tenants, authenticator in
                let habits = try await Self.tenant(tenants, "habits")
                let focus = try await Self.tenant(tenants, "focus")
                var inputs = IssuerPreset.Inputs()
                inputs.domain = "shared.auth0.com"
                inputs.audiences = ["https://habits.example"]
                try await issuers.add(tenantID: habits, try IssuerPreset.auth0.configuration(inputs, jwksURL: fixture.keys.jwksURL))
                inputs.audiences = ["https://focus.example"]
                try await issuers.add(tenantID: focus, try IssuerPreset.auth0.configuration(inputs, jwksURL: fixture.keys.jwksURL))
                // An audience the other tenant has is refused; so is the same issuer twice.
                inputs.audiences = ["https://focus.example", "https://more.example"]
                await #expect(throws: StoreError.self) { try await issuers.add(tenantID: habits, try IssuerPreset.auth0.configuration(inputs)) }
                let third = try await Self.tenant(tenants, "third")
                await #expect(throws: StoreError.self) { try await issuers.add(tenantID: third, try IssuerPreset.auth0.configuration(inputs)) }

                let iss = "https://shared.auth0.com/"
                let toHabits = try await TestProvider.token(TestProvider.claims(issuer: iss, audience: "https://habits.example", user: "same-person"), key: key)
                let toFocus = try await TestProvider.token(TestProvider.claims(issuer: iss, audience: "https://focus.example", user: "same-person"), key: key)
                #expect(try await Self.outcome(authenticator, toHabits).get().tenantID == habits)
                #expect(try await Self.outcome(authenticator, toFocus).get().tenantID == focus)

                // Removed: refused at once (this authenticator caches nothing), the other stays.
                try await issuers.remove(tenantID: habits, issuer: iss)
                #expect(try await Self.code(authenticator, toHabits) == "audience_mismatch")
                #expect(try await Self.outcome(authenticator, toFocus).get().tenantID == focus)
                let listed = try await issuers.list(tenantID: focus)
                #expect(listed.map(\.configuration.issuer) == [iss])
                #expect(try await issuers.list(tenantID: habits).isEmpty)
            }
        }
    }

    @Test func discoveryFindsTheKeysAndAnIssuerMismatchIsNeverTrusted() async throws {
        try await Self.withFixture { fixture in
            let key = try await TestProvider.ec(kid: "disc")
            fixture.keys.serve(jwks: TestProvider.jwks([key]))
            let issuer = fixture.keys.baseURL
            try await fixture.run { issuers, tenants, authenticator in
                let tenantID = try await Self.tenant(tenants, "discovering")
                try await issuers.add(tenantID: tenantID, try IssuerConfiguration(issuer: issuer, keySource: .discovery, audiences: ["habits"]))
                let token = try await TestProvider.token(TestProvider.claims(issuer: issuer, audience: "habits", user: "ann"), key: key)
                // The document names another issuer: its keys are not used.
                fixture.keys.serveDiscovery(issuer: "https://evil.example")
                await #expect(throws: IssuerKeysUnavailable.self) { _ = try await Self.outcome(authenticator, token) }
                #expect(fixture.keys.requests("/jwks.json") == 0)
                fixture.keys.serveDiscovery(issuer: issuer)
                #expect(try await Self.outcome(authenticator, token).get().tenantID == tenantID)
                #expect(fixture.keys.requests("/.well-known/openid-configuration") == 2)
            }
        }
    }

    @Test func inlineKeysAndTidTokensLiveSideBySide() async throws {
        let key = try await TestProvider.ec(kid: "inline")
        try await Self.withFixture { fixture in
            try await fixture.run { issuers, tenants, authenticator in
                let created = try await tenants.create(name: "both", key: TenantKey.generatedSecret())
                try await issuers.add(
                    tenantID: created.id,
                    try IssuerConfiguration(
                        issuer: "https://id.example.com", keySource: .inline(TestProvider.jwks([key])), audiences: ["habits"], algorithms: [.es256]))
                let oidc = try await TestProvider.token(TestProvider.claims(issuer: "https://id.example.com", audience: "habits", user: "ann"), key: key)
                let identity = try await Self.outcome(authenticator, oidc).get()
                #expect(identity.tenantID == created.id && identity.userID == "ann")
                let minted = try await TokenMinter.mint(tenantID: created.id, userID: "bob", key: try await tenants.signingKey(tenantID: created.id), ttl: 600)
                #expect(try await Self.outcome(authenticator, minted).get().userID == "bob")
                // Neither tid nor a configured iss.
                let orphan = TestProvider.unsigned(header: ["alg": "RS256"], claims: ["sub": "x", "exp": Date().timeIntervalSince1970 + 60])
                #expect(try await Self.code(authenticator, orphan) == "unknown_issuer")
                #expect(fixture.keys.requests("/jwks.json") == 0)
                // A disabled tenant's issuer routes nowhere.
                try await tenants.pool.withConnection { try await $0.query("UPDATE tenants SET disabled_at = now() WHERE id = \(created.id)") }
                #expect(try await Self.code(authenticator, oidc) == "unknown_issuer")
            }
        }
    }
}

extension IssuerVerificationTests {
    @Test func hostileTokensAreRefusedWithoutHarm() async throws {
        try await Self.withFixture { fixture in
            let key = try await TestProvider.rsa(kid: "k")
            fixture.keys.serve(jwks: TestProvider.jwks([key]))
            try await fixture.run { issuers, tenants, authenticator in
                try await Self.acceptLogin(issuers, tenants, "hostile", fixture)
                let now = Date().timeIntervalSince1970
                let base: [String: Any] = ["iss": "https://login.example.com", "aud": "habits", "sub": "ann", "iat": now, "exp": now + 60]
                func deep(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
                let deepPayload = Data(#"{"iss":"https://login.example.com","x":\#(deep(2500))}"#.utf8).base64URL
                let hostile: [(String, String)] = [
                    ("deep nesting", "eyJhbGciOiJSUzI1NiJ9.\(deepPayload).c2ln"),
                    ("1e308 iat", TestProvider.unsigned(header: ["alg": "RS256", "kid": "k"], claims: base.merging(["iat": 1e308]) { $1 })),
                    ("NUL in iss", TestProvider.unsigned(header: ["alg": "RS256", "kid": "k"], claims: base.merging(["iss": "https://login.example.com\u{0}"]) { $1 })),
                    ("control alg", TestProvider.unsigned(header: ["alg": "RS256\n", "kid": "k"], claims: base)),
                    ("kid of 5000", TestProvider.unsigned(header: ["alg": "RS256", "kid": String(repeating: "k", count: 5000)], claims: base)),
                    ("aud of objects", TestProvider.unsigned(header: ["alg": "RS256", "kid": "k"], claims: base.merging(["aud": [["a": 1]]]) { $1 })),
                    ("bool exp", TestProvider.unsigned(header: ["alg": "RS256", "kid": "k"], claims: base.merging(["exp": true]) { $1 })),
                    ("header not an object", "WzFd.\(Data("{}".utf8).base64URL).c2ln"),
                ]
                for (name, token) in hostile {
                    let code = try await Self.code(authenticator, token)
                    #expect(code != "ok", "\(name)")
                }
                // Still serving.
                let good = try await TestProvider.token(TestProvider.claims(issuer: "https://login.example.com", audience: "habits", user: "ann"), key: key)
                #expect(try await Self.code(authenticator, good) == "ok")
            }
        }
    }
}

extension IssuerVerificationTests {
    /// `--user-claim`: the user is the configured claim, not `sub`; a token without it is refused.
    @Test func theConfiguredUserClaimNamesTheUser() async throws {
        let key = try await TestProvider.ec(kid: "uc")
        try await Self.withFixture { fixture in
            try await fixture.run { issuers, tenants, authenticator in
                let tenantID = try await Self.tenant(tenants, "claims")
                try await issuers.add(
                    tenantID: tenantID,
                    try IssuerConfiguration(
                        issuer: "https://id.example.com", keySource: .inline(TestProvider.jwks([key])), audiences: ["habits"],
                        algorithms: [.es256], userClaim: "custom:user_id"))
                var claims = TestProvider.claims(issuer: "https://id.example.com", audience: "habits", user: "the-sub")
                claims["custom:user_id"] = .string("u-42")
                let identity = try await Self.outcome(authenticator, try await TestProvider.token(claims, key: key)).get()
                #expect(identity.userID == "u-42")
                claims["custom:user_id"] = nil
                #expect(try await Self.code(authenticator, try await TestProvider.token(claims, key: key)) == "token_invalid")
            }
        }
    }
}
