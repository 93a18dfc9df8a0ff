import Foundation
import GuardedFetch
import HabitSyncAuth
import TestSupport
import Testing

/// `tenant add-issuer | issuers | remove-issuer` as operators script them: the real binary
/// against a real database.
@Suite struct IssuerCommandTests {
    @Test func presetsAndCustomIssuersAreAddedListedAndRemoved() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let env = ["DATABASE_URL": database.connectionString]
        for name in ["acme", "globex"] {
            let created = try await HabitSyncBinary.run(["tenant", "create", name], environment: env)
            #expect(created.status == 0, "\(created.stderr)")
        }
        let adds: [([String], String)] = [
            (["--preset", "firebase", "--project", "habit-app-1234"], "https://securetoken.google.com/habit-app-1234"),
            (["--preset", "apple", "--bundle-id", "com.example.habits", "--bundle-id", "com.example.habits.watch"], "https://appleid.apple.com"),
            (["--preset", "auth0", "--domain", "habits.eu.auth0.com", "--audience", "https://api.habits.example"], "https://habits.eu.auth0.com/"),
            (["--preset", "supabase", "--project-url", "https://abcdefghijklmnop.supabase.co/"], "https://abcdefghijklmnop.supabase.co/auth/v1"),
            (["--preset", "cognito", "--region", "eu-west-1", "--user-pool", "eu-west-1_AbCdEf123"], "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"),
            (["--issuer", "https://login.example.com", "--discover", "--audience", "habits", "--algorithm", "EdDSA", "--user-claim", "uid", "--max-lifetime", "1h"], "https://login.example.com"),
        ]
        for (arguments, issuer) in adds {
            let added = try await HabitSyncBinary.run(["tenant", "add-issuer", "acme"] + arguments, environment: env)
            #expect(added.status == 0, "\(arguments): \(added.stderr)")
            #expect(added.stdout == issuer + "\n")
        }
        let listed = try await HabitSyncBinary.run(["tenant", "issuers", "acme", "--json"], environment: env)
        let issuers = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(issuers.count == 6)
        let byIssuer = Dictionary(uniqueKeysWithValues: issuers.map { ($0["issuer"] as? String ?? "", $0) })
        #expect(byIssuer["https://appleid.apple.com"]?["audiences"] as? [String] == ["com.example.habits", "com.example.habits.watch"])
        #expect(
            (byIssuer["https://securetoken.google.com/habit-app-1234"]?["keys"] as? [String: String])?["url"]
                == "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com")
        #expect(byIssuer["https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"]?["audienceClaims"] as? [String] == ["aud", "client_id"])
        #expect(byIssuer["https://abcdefghijklmnop.supabase.co/auth/v1"]?["audiences"] as? [String] == ["authenticated"])
        let custom = byIssuer["https://login.example.com"]
        #expect(custom?["algorithms"] as? [String] == ["EdDSA"])
        #expect(custom?["userClaim"] as? String == "uid")
        #expect(custom?["maxLifetimeSeconds"] as? Int == 3600)
        #expect((custom?["keys"] as? [String: String])?["url"] == "https://login.example.com/.well-known/openid-configuration")
        let table = try await HabitSyncBinary.run(["tenant", "issuers", "acme"], environment: env)
        #expect(table.stdout.split(separator: "\n").count == 7)

        // Another tenant: the same Auth0 issuer with another audience is fine, the same one is not.
        let other = try await HabitSyncBinary.run(
            ["tenant", "add-issuer", "globex", "--preset", "auth0", "--domain", "habits.eu.auth0.com", "--audience", "https://api.globex.example"], environment: env)
        #expect(other.status == 0, "\(other.stderr)")
        let clash = try await HabitSyncBinary.run(["tenant", "add-issuer", "globex", "--preset", "firebase", "--project", "habit-app-1234"], environment: env)
        #expect(clash.status == 1)
        #expect(clash.stderr.contains("already accepts https://securetoken.google.com/habit-app-1234 for audience(s) habit-app-1234"), "\(clash.stderr)")
        // Cognito without --audience accepts every client: nobody else may share that pool.
        let pool = try await HabitSyncBinary.run(
            ["tenant", "add-issuer", "globex", "--preset", "cognito", "--region", "eu-west-1", "--user-pool", "eu-west-1_AbCdEf123", "--audience", "x"], environment: env)
        #expect(pool.status == 1)
        #expect(pool.stderr.contains("every audience"))

        let removed = try await HabitSyncBinary.run(["tenant", "remove-issuer", "acme", "https://appleid.apple.com"], environment: env)
        #expect(removed.status == 0, "\(removed.stderr)")
        let again = try await HabitSyncBinary.run(["tenant", "remove-issuer", "acme", "https://appleid.apple.com"], environment: env)
        #expect(again.status == 1)
        #expect(again.stderr.contains("no issuer https://appleid.apple.com"))
        let after = try await HabitSyncBinary.run(["tenant", "issuers", "acme", "--json"], environment: env)
        #expect((try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [Any])?.count == 5)

        // A tenant's erasure takes its issuers with it.
        let erased = try await HabitSyncBinary.run(["tenant", "erase", "globex"], environment: env)
        #expect(erased.status == 0, "\(erased.stderr)")
        let reuse = try await HabitSyncBinary.run(
            ["tenant", "add-issuer", "acme", "--issuer", "https://habits.eu.auth0.com/", "--jwks-url", "https://x.example/k", "--audience", "a"], environment: env)
        #expect(reuse.status == 1, "acme has that issuer already")
    }

    @Test func hostileArgumentsAreRefusedNamingTheOptionAndStoreNothing() async throws {
        let database = try await TestPostgres.shared.migratedDatabase()
        let env = ["DATABASE_URL": database.connectionString]
        #expect(try await HabitSyncBinary.run(["tenant", "create", "acme"], environment: env).status == 0)
        let folder = try makeTemporaryDirectory("issuer-args")
        defer { try? FileManager.default.removeItem(at: folder) }
        let junk = folder.appendingPathComponent("junk.json")
        try Data(#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#.utf8).write(to: junk)
        let huge = folder.appendingPathComponent("huge.json")
        try Data(repeating: 0x20, count: 300_000).write(to: huge)
        let cases: [([String], String)] = [
            (["--issuer", "https://a.example", "--audience", "x"], "exactly one of --jwks-url, --discover and --jwks-file"),
            (["--issuer", "https://a.example", "--discover"], "at least one --audience"),
            (["--issuer", "http://a.example\n", "--discover", "--audience", "x"], "--issuer"),
            (["--issuer", "ftp://a.example", "--discover", "--audience", "x"], "--issuer must start with https://"),
            (["--issuer", "https://" + String(repeating: "a", count: 600), "--discover", "--audience", "x"], "--issuer must be 1–512 characters"),
            (["--issuer", "https://a.example", "--discover", "--audience", "x\u{1}y"], "control characters"),
            (["--issuer", "https://a.example", "--discover", "--audience", "x", "--algorithm", "HS256"], "--algorithm HS256"),
            (["--issuer", "https://a.example", "--discover", "--audience", "x", "--algorithm", "none"], "--algorithm none"),
            (["--issuer", "https://a.example", "--discover", "--audience", "x", "--user-claim", "a b"], "--user-claim"),
            (["--issuer", "https://a.example", "--discover", "--audience", "x", "--max-lifetime", "90d"], "--max-lifetime"),
            (["--issuer", "https://a.example", "--discover", "--audience", "x", "--max-lifetime", "1e308"], "--max-lifetime"),
            (["--issuer", "https://a.example", "--jwks-file", junk.path, "--audience", "x"], "no usable signing key"),
            (["--issuer", "https://a.example", "--jwks-file", huge.path, "--audience", "x"], "larger than 262144 bytes"),
            (["--preset", "firebase"], "needs --project"),
            (["--preset", "firebase", "--project", "Bad_Project"], "--project 'Bad_Project' must be a Firebase project id"),
            (["--preset", "firebase", "--project", "good-project\n"], "must not contain spaces or control characters"),
            (["--preset", "firebase", "--project", "habit-app", "--domain", "x.auth0.com"], "--domain does not apply to --preset firebase"),
            (["--preset", "auth0", "--domain", "https://x.auth0.com", "--audience", "a"], "without https://"),
            (["--preset", "auth0", "--domain", "x.auth0.com"], "needs --audience"),
            (["--preset", "apple"], "needs --bundle-id"),
            (["--preset", "supabase", "--project-url", "http://abc.supabase.co"], "--project-url"),
            (["--preset", "cognito", "--region", "eu-west-1", "--user-pool", "us-east-1_Abc"], "is not in --region eu-west-1"),
            (["--preset", "okta"], "--preset okta: must be one of firebase, apple, auth0, supabase, cognito"),
            (["--preset", "firebase", "--project", "habit-app", "--issuer", "https://x.example"], "only --jwks-url may replace"),
        ]
        for (arguments, message) in cases {
            let outcome = try await HabitSyncBinary.run(["tenant", "add-issuer", "acme"] + arguments, environment: env)
            #expect(outcome.status != 0, "\(arguments) was accepted")
            #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
        }
        let listed = try await HabitSyncBinary.run(["tenant", "issuers", "acme", "--json"], environment: env)
        #expect(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        let unknown = try await HabitSyncBinary.run(["tenant", "issuers", "nobody"], environment: env)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no tenant 'nobody'"))
    }
}

/// What a key fetch may reach, checked before and while it connects.
@Suite struct GuardedFetchTests {
    static func failure(_ url: String, _ policy: FetchPolicy = FetchPolicy(timeout: .seconds(2))) async -> FetchFailure? {
        do {
            _ = try await GuardedFetcher(policy: policy).get(url)
            return nil
        } catch {
            return error
        }
    }

    @Test func privateAddressesPlainHTTPAndOddURLsAreRefused() async throws {
        for url in [
            "https://127.0.0.1/keys", "https://10.1.2.3/keys", "https://169.254.169.254/latest/meta-data", "https://192.168.0.1/",
            "https://172.16.5.4/", "https://100.64.0.1/", "https://[::1]/", "https://[fd00::1]/", "https://[fe80::1]/", "https://0.0.0.0/",
            "https://[::ffff:127.0.0.1]/", "https://localhost/",
        ] {
            #expect(await Self.failure(url) == .addressRefused, "\(url)")
        }
        for url in [
            "http://example.com/keys", "http://10.0.0.1/", "ftp://example.com/", "file:///etc/passwd", "https://user:pw@example.com/",
            "https://example.com/a b", "https://example.com/\n", "/relative", "https://" + String(repeating: "a", count: 3000),
        ] {
            guard case .urlRefused = await Self.failure(url) else { Issue.record("\(url) was not refused as a URL"); continue }
        }
        // Plain HTTP to loopback only with the test flag, and then to loopback only.
        var loopback = FetchPolicy(timeout: .seconds(2))
        loopback.allowLoopbackHTTP = true
        guard case .urlRefused = await Self.failure("http://10.0.0.1/", loopback) else { Issue.record("http to a private host"); return }
    }

    @Test func aLargeBodyAnErrorStatusAndAnOutageFailCleanly() async throws {
        let server = try await LoopbackKeyServer.start()
        var policy = FetchPolicy(timeout: .seconds(5), maximumBytes: 1000)
        policy.allowLoopbackHTTP = true
        server.serve(jwks: #"{"keys":[]}"#)
        #expect(try await GuardedFetcher(policy: policy).get(server.jwksURL) == Array(#"{"keys":[]}"#.utf8))
        server.serve(jwks: String(repeating: "x", count: 5000))
        #expect(await Self.failure(server.jwksURL, policy) == .tooLarge(limit: 1000))
        server.setDown(true)
        let down = await Self.failure(server.jwksURL, policy)
        #expect(down != nil)
        #expect(await Self.failure(server.baseURL + "/missing", policy) != nil)
        server.setDown(false)
        server.setStalled(true)
        policy.timeout = .milliseconds(300)
        #expect(await Self.failure(server.jwksURL, policy) == .timedOut)
        server.setStalled(false)
        await server.stop()
    }
}
