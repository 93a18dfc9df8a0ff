import Foundation
import HabitSyncAuth
import HabitSyncServer
import HabitSyncStore
import JWTKit
import LibPQClient
import Logging
import TestSupport
import Testing
import _CryptoExtras

/// Tokens verified exactly as requests are: the tenant's keys read through the request role,
/// under the tenant's RLS context, from a real database.
@Suite struct AccessTokenTests {
    struct Fixture {
        let database: TestDatabase

        /// Admin operations as the owner; authentication as the request role, uncached.
        func withStores<T: Sendable>(_ body: (TenantStore, Authenticator) async throws -> T) async throws -> T {
            try await database.withPool(size: 2) { owner in
                try await database.withPool(size: 2, role: "habitsync_app") { app in
                    try await body(TenantStore(pool: owner), Authenticator(tenants: TenantStore(pool: app), cacheLifetime: .zero))
                }
            }
        }
    }

    static let logger = Logger(label: "auth-tests")

    static func fixture() async throws -> Fixture { Fixture(database: try await TestPostgres.shared.migratedDatabase()) }

    static func bearer(_ token: String) -> String { "Bearer \(token)" }

    /// Signs arbitrary claims with any jwt-kit key collection.
    static func sign(_ claims: [String: any Sendable], with keys: JWTKeyCollection, kid: String? = nil) async throws -> String {
        struct Claims: JWTPayload {
            var tid: String?
            var sub: SubjectClaim?
            var exp: ExpirationClaim?
            var nbf: NotBeforeClaim?
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let payload = Claims(
            tid: claims["tid"] as? String, sub: (claims["sub"] as? String).map(SubjectClaim.init(value:)),
            exp: (claims["exp"] as? Date).map(ExpirationClaim.init(value:)), nbf: (claims["nbf"] as? Date).map(NotBeforeClaim.init(value:)))
        var header = JWTHeader()
        if let kid { header.kid = kid }
        return try await keys.sign(payload, header: header)
    }

    static func hmacKeys(_ secret: [UInt8]) async -> JWTKeyCollection {
        await JWTKeyCollection().add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
    }

    static func secret(of key: TenantKey) -> [UInt8] {
        guard case .sharedSecret(let bytes) = key.material else { return [] }
        return bytes
    }

    @Test func aMintedHS256TokenVerifiesAsItsTenantAndUser() async throws {
        try await Self.fixture().withStores { tenants, authenticator in
            let tenant = try await tenants.create(name: "acme", key: TenantKey.generatedSecret())
            let key = try await tenants.signingKey(tenantID: tenant.id)
            let token = try await TokenMinter.mint(tenantID: tenant.id, userID: "user-42", key: key, ttl: 3600)
            let identity = try await authenticator.authenticate(authorization: Self.bearer(token), logger: Self.logger)
            #expect(identity?.tenantID == tenant.id)
            #expect(identity?.userID == "user-42")
        }
    }

    @Test func everyKindOfBadTokenIsRefused() async throws {
        try await Self.fixture().withStores { tenants, authenticator in
            let key = TenantKey.generatedSecret()
            let tenant = try await tenants.create(name: "acme", key: key)
            let other = TenantKey.generatedSecret()
            let otherTenant = try await tenants.create(name: "globex", key: other)
            let tid = tenant.id.uuidString.lowercased()
            let good: [String: any Sendable] = ["tid": tid, "sub": "u1", "exp": Date().addingTimeInterval(600)]
            let ours = await Self.hmacKeys(Self.secret(of: key))
            let valid = try await Self.sign(good, with: ours)
            #expect(try await authenticator.authenticate(authorization: Self.bearer(valid), logger: Self.logger) != nil)

            var refused: [String: String] = [:]
            // A forged signature: the right claims signed with a secret that is not the tenant's.
            refused["forged signature"] = try await Self.sign(good, with: Self.hmacKeys(Array(repeating: 7, count: 32)))
            // The signature of the valid token, bit-flipped.
            var flipped = Array(valid.utf8)
            flipped[flipped.count - 2] = flipped[flipped.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            refused["tampered signature"] = String(decoding: flipped, as: UTF8.self)
            // alg none, with and without a signature part.
            let noneHeader = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64URL
            let payload = valid.split(separator: ".")[1]
            refused["alg none"] = "\(noneHeader).\(payload)."
            refused["alg none with signature"] = "\(noneHeader).\(payload).\(valid.split(separator: ".")[2])"
            // Another tenant's key, claiming this tenant.
            refused["other tenant's key"] = try await Self.sign(good, with: Self.hmacKeys(Self.secret(of: other)))
            // Expired beyond the 60 s leeway, not yet valid beyond it (by an hour: a busy machine can
            // stretch this loop past a minute, and a token then became valid while it ran).
            refused["expired"] = try await Self.sign(["tid": tid, "sub": "u1", "exp": Date().addingTimeInterval(-90)], with: ours)
            refused["not yet valid"] = try await Self.sign(["tid": tid, "sub": "u1", "exp": Date().addingTimeInterval(7200), "nbf": Date().addingTimeInterval(3600)], with: ours)
            refused["no exp"] = try await Self.sign(["tid": tid, "sub": "u1"], with: ours)
            refused["no sub"] = try await Self.sign(["tid": tid, "exp": Date().addingTimeInterval(600)], with: ours)
            refused["empty sub"] = try await Self.sign(["tid": tid, "sub": "", "exp": Date().addingTimeInterval(600)], with: ours)
            refused["no tid"] = try await Self.sign(["sub": "u1", "exp": Date().addingTimeInterval(600)], with: ours)
            refused["unknown tenant"] = try await Self.sign(["tid": UUID().uuidString, "sub": "u1", "exp": Date().addingTimeInterval(600)], with: ours)
            refused["tid of another tenant, our key"] = try await Self.sign(["tid": otherTenant.id.uuidString, "sub": "u1", "exp": Date().addingTimeInterval(600)], with: ours)
            refused["garbage"] = "not.a.jwt"
            refused["two parts"] = "abc.def"

            for (name, token) in refused.sorted(by: { $0.key < $1.key }) {
                let identity = try await authenticator.authenticate(authorization: Self.bearer(token), logger: Self.logger)
                #expect(identity == nil, "accepted: \(name)")
            }
            for header in [nil, "", "Bearer", "Basic dXNlcjpwdw==", "bearer", valid] as [String?] {
                #expect(try await authenticator.authenticate(authorization: header, logger: Self.logger) == nil, "accepted header \(header ?? "nil")")
            }
        }
    }

    /// Checked at a fixed instant (`now`), not the wall clock: on a busy machine the seconds
    /// between signing and checking once took the "just expired" token past the leeway.
    @Test func theLeewayToleratesSmallClockSkewOnly() async throws {
        let key = TenantKey.generatedSecret()
        let keys = await Self.hmacKeys(Self.secret(of: key))
        let tid = UUID().uuidString
        let now = Date()
        func verdict(_ claims: [String: any Sendable]) async throws -> Bool {
            let token = try await Self.sign(["tid": tid, "sub": "u"].merging(claims) { $1 }, with: keys)
            do {
                _ = try await AccessTokenVerifier.verify(token, unverified: try UnverifiedToken(token), keys: [key], now: now)
                return true
            } catch {
                return false
            }
        }
        let leeway = AccessTokenVerifier.leeway
        #expect(try await verdict(["exp": now.addingTimeInterval(-leeway / 2)]), "expired within the leeway")
        #expect(try await verdict(["exp": now.addingTimeInterval(600), "nbf": now.addingTimeInterval(leeway / 2)]), "not yet valid within the leeway")
        #expect(try await !verdict(["exp": now.addingTimeInterval(-leeway - 30)]), "expired beyond the leeway")
        #expect(try await !verdict(["exp": now.addingTimeInterval(600), "nbf": now.addingTimeInterval(leeway + 30)]), "not yet valid beyond the leeway")
    }

    @Test func es256AndRS256TenantsVerifyTheirOwnSignaturesAndRefuseAlgorithmConfusion() async throws {
        try await Self.fixture().withStores { tenants, authenticator in
            let ecPrivate = ES256PrivateKey()
            let ecTenant = try await tenants.create(name: "ec", key: try TenantKey.publicKey(pem: ecPrivate.publicKey.pemRepresentation))
            let rsaBacking = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let rsaPrivate = try Insecure.RSA.PrivateKey(backing: rsaBacking)
            let rsaPEM = rsaBacking.publicKey.pemRepresentation
            let rsaTenant = try await tenants.create(name: "rsa", key: try TenantKey.publicKey(pem: rsaPEM))
            #expect(ecTenant.activeKeyAlgorithms == [.es256])
            #expect(rsaTenant.activeKeyAlgorithms == [.rs256])

            let exp = Date().addingTimeInterval(600)
            let ecToken = try await Self.sign(["tid": ecTenant.id.uuidString, "sub": "e", "exp": exp], with: JWTKeyCollection().add(ecdsa: ecPrivate))
            let rsaToken = try await Self.sign(["tid": rsaTenant.id.uuidString, "sub": "r", "exp": exp], with: JWTKeyCollection().add(rsa: rsaPrivate, digestAlgorithm: .sha256))
            #expect(try await authenticator.authenticate(authorization: Self.bearer(ecToken), logger: Self.logger)?.userID == "e")
            #expect(try await authenticator.authenticate(authorization: Self.bearer(rsaToken), logger: Self.logger)?.userID == "r")

            // The classic confusion: HS256 signed with the RS256 public key's PEM as the secret.
            let confused = try await Self.sign(["tid": rsaTenant.id.uuidString, "sub": "r", "exp": exp], with: Self.hmacKeys(Array(rsaPEM.utf8)))
            #expect(try await authenticator.authenticate(authorization: Self.bearer(confused), logger: Self.logger) == nil)
            // And a token of the EC tenant signed by another EC key.
            let stranger = try await Self.sign(["tid": ecTenant.id.uuidString, "sub": "e", "exp": exp], with: JWTKeyCollection().add(ecdsa: ES256PrivateKey()))
            #expect(try await authenticator.authenticate(authorization: Self.bearer(stranger), logger: Self.logger) == nil)
        }
    }

    @Test func rotatingAKeyRetiresTheOldOneAfterItsGrace() async throws {
        try await Self.fixture().withStores { tenants, authenticator in
            let first = TenantKey.generatedSecret()
            let tenant = try await tenants.create(name: "acme", key: first)
            let oldToken = try await TokenMinter.mint(tenantID: tenant.id, userID: "u", key: first, ttl: 600)

            let second = TenantKey.generatedSecret()
            try await tenants.rotateKey(tenant: "acme", to: second, grace: 3600)
            #expect(try await authenticator.authenticate(authorization: Self.bearer(oldToken), logger: Self.logger) != nil, "old key within grace")
            let newToken = try await TokenMinter.mint(tenantID: tenant.id, userID: "u", key: try await tenants.signingKey(tenantID: tenant.id), ttl: 600)
            #expect(try await authenticator.authenticate(authorization: Self.bearer(newToken), logger: Self.logger) != nil)

            try await tenants.rotateKey(tenant: tenant.id.uuidString, to: TenantKey.generatedSecret(), grace: 0)
            #expect(try await authenticator.authenticate(authorization: Self.bearer(oldToken), logger: Self.logger) == nil, "retired key")
            #expect(try await authenticator.authenticate(authorization: Self.bearer(newToken), logger: Self.logger) == nil, "retired key")
        }
    }

    @Test func aDisabledTenantsTokensAreRefused() async throws {
        let fixture = try await Self.fixture()
        try await fixture.withStores { tenants, authenticator in
            let key = TenantKey.generatedSecret()
            let tenant = try await tenants.create(name: "acme", key: key)
            let token = try await TokenMinter.mint(tenantID: tenant.id, userID: "u", key: key, ttl: 600)
            try await tenants.pool.withConnection { try await $0.query("UPDATE tenants SET disabled_at = now() WHERE id = \(tenant.id)") }
            #expect(try await authenticator.authenticate(authorization: Self.bearer(token), logger: Self.logger) == nil)
        }
    }

    @Test func keyMaterialIsCheckedBeforeItIsStored() async throws {
        #expect(throws: KeyMaterialError.self) { try TenantKey(algorithm: .hs256, material: .sharedSecret(Array("too short".utf8))) }
        #expect(throws: KeyMaterialError.self) { try TenantKey(algorithm: .es256, material: .publicKeyPEM("-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----")) }
        #expect(throws: KeyMaterialError.self) { try TenantKey(algorithm: .rs256, material: .sharedSecret(Array(repeating: 1, count: 64))) }
        #expect(throws: KeyMaterialError.self) { try TenantKey.publicKey(pem: "hello") }
        try await Self.fixture().withStores { tenants, _ in
            _ = try await tenants.create(name: "acme", key: TenantKey.generatedSecret())
            await #expect { _ = try await tenants.create(name: "acme", key: TenantKey.generatedSecret()) } throws: { ($0 as? StoreError)?.code == .tenantExists }
        }
    }
}

extension Data {
    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
