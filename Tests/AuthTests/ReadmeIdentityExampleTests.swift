import Foundation
import TestSupport
import Testing

/// The README's "Your own identity provider" block, run as printed: `openssl` plays the
/// provider, the real binary adds the issuer and mints, curl asks a real server.
@Suite struct ReadmeIdentityExampleTests {
    /// The shell block after `<!-- identity-example -->`, without its `# …` answer lines.
    static func exampleBlock() throws -> (commands: String, answers: [String]) {
        let readme = try String(contentsOf: TestPostgres.migrationsDirectory.deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        let marker = try #require(readme.range(of: "<!-- identity-example -->\n```sh\n"))
        let end = try #require(readme.range(of: "\n```", range: marker.upperBound..<readme.endIndex))
        let lines = readme[marker.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
        return (lines.filter { !$0.hasPrefix("#") }.joined(separator: "\n"), lines.filter { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) })
    }

    @Test func theReadmesIdentityProviderExampleRunsAsPrinted() async throws {
        let (commands, answers) = try Self.exampleBlock()
        #expect(answers.count == 2)
        let database = try await TestPostgres.shared.migratedDatabase()
        let env = ["DATABASE_URL": database.connectionString]
        let created = try await HabitSyncBinary.run(["tenant", "create", "demo"], environment: env)
        #expect(created.status == 0, "\(created.stderr)")
        let folder = try makeTemporaryDirectory("readme-identity")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The block's `mktemp -d` lands here, removed with the folder.
        let temporary = folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false)
        try await RunningServer.with(database: database) { server in
            // As printed, but with this server's address for the README's localhost:8080, and a
            // line end after each answer (a terminal shows each after its own command).
            let script =
                "set -e\nB=\(HabitSyncBinary.url.path)\n"
                + commands.replacingOccurrences(of: "localhost:8080", with: server.baseURL).replacingOccurrences(of: "curl -s ", with: "curl -s -w '\\n' ") + "\n"
            let outcome = try await HabitSyncBinary.run(
                executable: URL(fileURLWithPath: "/bin/bash"), ["-c", script], environment: env.merging(["TMPDIR": temporary.path]) { $1 }, in: folder)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            // The provider's keys went to a folder of their own, not where the block ran (a
            // checkout, for a reader: issuer.key was left there untracked).
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tmp"])
            let replies = outcome.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("{") }
            try #require(replies.count == 2, "stdout: \(outcome.stdout) stderr: \(outcome.stderr)")
            let pulled = try #require(try JSONSerialization.jsonObject(with: Data(replies[0].utf8)) as? [String: Any])
            #expect((pulled["changes"] as? [Any])?.isEmpty == true, "\(replies[0])")
            #expect(pulled["hasMore"] as? Bool == false)
            #expect(answers[0].hasPrefix(#"{"changes":[],"cursor":"#))
            // The refusal is printed exactly as the README shows it.
            #expect(replies[1] == answers[1])
        }
    }
}
