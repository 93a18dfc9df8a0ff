import Foundation
import ServerHarness
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 31: the shell examples of the README and `docs/protocol.md` run as printed, with the
/// real binary and curl against a real server, and what they print is compared with what the
/// docs show (`ShownJSON`'s placeholders stand for ids, times and cursors). A drifted example
/// fails here.
@Suite struct DocumentedExampleTests {
    struct Block {
        let language: String
        let text: String
        /// The heading the block is under.
        let section: String
    }

    static func blocks(of file: String) throws -> [Block] {
        let text = try String(contentsOf: ClientPackageTests.root.appendingPathComponent(file), encoding: .utf8)
        var blocks: [Block] = []
        var section = ""
        var open: (language: String, lines: [String])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if var current = open {
                if line == "```" {
                    blocks.append(Block(language: current.language, text: current.lines.joined(separator: "\n"), section: section))
                    open = nil
                } else {
                    current.lines.append(line)
                    open = current
                }
            } else if line.hasPrefix("```") {
                open = (String(line.dropFirst(3)), [])
            } else if line.hasPrefix("#") {
                section = line.trimmingCharacters(in: CharacterSet(charactersIn: "# "))
            }
        }
        return blocks
    }

    /// Runs `shellBlocks` against `server` as the docs print them: `B` and `D` are this build's
    /// binaries (a `swift build` line is skipped: the suite's build made them),
    /// `localhost:8080` is the server, and each curl answer ends its line as a terminal shows
    /// it. Returns the lines each block printed.
    static func run(_ shellBlocks: [String], server: RunningServer, environment: [String: String]) async throws -> [[String]] {
        try await run(shellBlocks, baseURL: server.baseURL, environment: environment)
    }

    /// The same against the server at `baseURL`, with `binary` as `B` (an installed copy).
    static func run(_ shellBlocks: [String], baseURL: String, binary: URL = HabitSyncBinary.url, environment: [String: String]) async throws -> [[String]] {
        let marker = "@@end of block@@"
        let binaries = HabitSyncBinary.url.deletingLastPathComponent()
        let script =
            "set -e\n"
            + shellBlocks.map { block in
                block.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { line in
                        if line.hasPrefix("B=") { return "B=\(binary.path)" }
                        if line.hasPrefix("D=") { return "D=\(binaries.appendingPathComponent("habitsync-device").path)" }
                        return line.hasPrefix("swift build") ? "" : String(line)
                    }
                    .joined(separator: "\n")
                    .replacingOccurrences(of: "localhost:8080", with: baseURL)
                    .replacingOccurrences(of: "curl -s ", with: "curl -s -w '\\n' ")
                    + "\necho '\(marker)'\n"
            }.joined()
        let folder = try makeTemporaryDirectory("habitsync-docs")
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try await HabitSyncBinary.run(executable: URL(fileURLWithPath: "/bin/bash"), ["-c", script], environment: environment, in: folder)
        #expect(outcome.status == 0, "the example failed: \(outcome.stderr)\n--- printed\n\(outcome.stdout)\n--- script\n\(script)")
        let outputs = outcome.stdout.components(separatedBy: marker + "\n").dropLast()
        #expect(outputs.count == shellBlocks.count, "\(outcome.stdout)")
        return outputs.map { $0.split(separator: "\n").map(String.init) }
    }

    /// The answers among a block's lines: the JSON ones.
    static func answers(_ lines: [String]) -> [String] { lines.filter { $0.hasPrefix("{") } }

    static func expectSame(_ shown: String, _ printed: String, _ what: String) {
        let mismatches = ShownJSON.mismatches(shown: shown, actual: printed)
        #expect(mismatches.isEmpty, "\(what): the docs show something else than the server printed:\n\(mismatches.prefix(12).joined(separator: "\n"))\n--- printed\n\(printed)")
    }

    /// The comparison itself: placeholders let through what they stand for, and nothing else.
    @Test func theComparisonCatchesDrift() {
        let printed = #"{"batchId":"6f1c4a52","epoch":"b9bd.adc0","results":[{"index":0,"status":"applied","serverVersion":1}],"hasMore":false}"#
        #expect(ShownJSON.mismatches(shown: #"{"batchId":"6f1c…","epoch":"4f0c…","results":[{"index":0,"status":"applied","serverVersion":1}],"hasMore":false}"#, actual: printed).isEmpty)
        #expect(ShownJSON.mismatches(shown: #"{"batchId":"6f1c…","results":[…],…}"#, actual: printed).isEmpty)
        #expect(ShownJSON.mismatches(shown: #"{"batchId":"…","results":[{"index":0,"status":"applied","serverVersion":…}],…}"#, actual: printed).isEmpty)
        for drifted in [
            #"{"batchId":"6f1c…","results":[{"index":0,"status":"applied","serverVersion":1}],"hasMore":false}"#,  // epoch left out
            #"{"batchId":"7f1c…","epoch":"…","results":[…],"hasMore":false}"#,  // another prefix
            #"{"batchId":"…","epoch":"…","results":[{"index":0,"status":"applied","serverVersion":1},{"index":1,"status":"applied","serverVersion":2}],"hasMore":false}"#,
            #"{"batchId":"…","epoch":"…","results":[],"hasMore":false}"#,  // one printed, none shown
            #"{"batchId":"…","epoch":"…","results":[{"index":0,"status":"superseded","serverVersion":1}],"hasMore":false}"#,
            #"{"batchId":"…","epoch":"…","results":[{"index":0,"status":"applied","serverVersion":2}],"hasMore":false}"#,
            #"{"batchId":"…","epoch":"…","results":[…],"hasMore":true}"#,
            #"{"batchId":"…","epoch":"…","results":[…],"hasMore":false,"digests":{…}}"#,  // shown, not printed
        ] {
            #expect(!ShownJSON.mismatches(shown: drifted, actual: printed).isEmpty, "\(drifted)")
        }
    }

    /// The README's first sync: its commands, and the answers it shows (`# {…}` lines).
    static func firstSync() throws -> (commands: String, shown: [String]) {
        let block = try #require(try blocks(of: "README.md").first { $0.section == "A first sync with curl" && $0.language == "sh" })
        let lines = block.text.split(separator: "\n").map { String($0) }
        return (lines.filter { !$0.hasPrefix("# ") }.joined(separator: "\n"), lines.filter { $0.hasPrefix("# {") }.map { String($0.dropFirst(2)) })
    }

    @Test func theReadmesFirstSyncWithCurlPrintsWhatItShows() async throws {
        let (commands, shown) = try Self.firstSync()
        #expect(shown.count == 2)
        // The readiness line above it: `curl -s localhost:8080/readyz      # {…}`.
        let readiness = try #require(try Self.blocks(of: "README.md").lazy.flatMap { $0.text.split(separator: "\n") }.first { $0.hasPrefix("curl -s localhost:8080/readyz") })
        let answer = try #require(readiness.range(of: "# {"))
        let shownReadiness = String(readiness[readiness.index(before: answer.upperBound)...])
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            // As a user does: wait until the server says it is ready, then run the README's
            // line. (Its probe gives the database 2 s; on a busy machine a first probe can say
            // `database_unreachable`, which is right, and the README shows the ready answer.)
            #expect(try await TestHTTP.awaitReady(server.baseURL) == 200, "the server never became ready")
            let ready = Self.answers(try await Self.run(["curl -s localhost:8080/readyz"], server: server, environment: [:]).first ?? [])
            Self.expectSame(shownReadiness, ready.first ?? "", "README, /readyz (a new migration raises both versions)")
            let printed = Self.answers(try await Self.run([commands], server: server, environment: ["DATABASE_URL": database.connectionString]).first ?? [])
            try #require(printed.count == shown.count, "\(printed)")
            for (index, (expected, answer)) in zip(shown, printed).enumerated() {
                Self.expectSame(expected, answer, "README, the first sync's answer \(index + 1)")
            }
        }
    }

    /// A line the README shows a command printing (`# → …`): `…` is anything, `<id>` a record
    /// id, `<today>` a date; the rest is literal.
    static func shownLine(_ text: String) throws -> Regex<AnyRegexOutput> {
        var pattern = "^"
        var rest = Substring(text)
        while let first = rest.first {
            if rest.hasPrefix("<id>") {
                pattern += "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                rest = rest.dropFirst(4)
            } else if rest.hasPrefix("<today>") {
                pattern += "[0-9]{4}-[0-9]{2}-[0-9]{2}"
                rest = rest.dropFirst(7)
            } else {
                pattern += first == "…" ? ".*" : NSRegularExpression.escapedPattern(for: String(first))
                rest = rest.dropFirst()
            }
        }
        return try Regex(pattern + "$")
    }

    @Test func theReadmesTwoDevicesPrintWhatTheyShow() async throws {
        let block = try #require(try Self.blocks(of: "README.md").first { $0.section == "Two devices in two terminals" && $0.language == "sh" })
        // Each command with what the README shows it printing (a `# →` line of its own belongs
        // to the command before it).
        var steps: [(command: String, shown: [String])] = []
        for line in block.text.split(separator: "\n").map(String.init) {
            let parts = line.components(separatedBy: "# ")
            let command = parts[0].trimmingCharacters(in: .whitespaces)
            let comment = parts.dropFirst().joined(separator: "# ")
            let shown = comment.hasPrefix("→ ") ? [String(comment.dropFirst(2))] : []
            if command.isEmpty, let last = steps.indices.last {
                steps[last].shown += shown
            } else if !command.isEmpty {
                steps.append((command, shown))
            }
        }
        #expect(steps.filter { !$0.shown.isEmpty }.count >= 6, "\(steps)")
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            // After the README's earlier `tenant create demo`. Each answer may take long on a
            // loaded machine (a run beside a release build outlived the device's 60 s): the
            // devices wait up to 15 minutes here.
            let printed = try await Self.run(
                ["B=\n$B tenant create demo >/dev/null"] + steps.map(\.command), server: server,
                environment: ["DATABASE_URL": database.connectionString, "HABITSYNC_SERVER": server.baseURL, "HABITSYNC_TIMEOUT": "900"]
            )
            .dropFirst()
            try #require(printed.count == steps.count)
            for ((command, shown), lines) in zip(steps, printed) where !shown.isEmpty {
                let agrees = lines.count == shown.count && zip(shown, lines).allSatisfy { pattern, line in (try? Self.shownLine(pattern).wholeMatch(in: line)) != nil }
                #expect(agrees, "README, `\(command)`: shown\n\(shown.joined(separator: "\n"))\nprinted\n\(lines.joined(separator: "\n"))")
            }
        }
    }

    /// docs/operations.md, "Tenant quotas": the admin's commands as printed.
    @Test func theOperationsQuotaExampleRuns() async throws {
        let block = try #require(try Self.blocks(of: "docs/operations.md").first { $0.section == "Tenant quotas" && $0.language == "sh" })
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            let printed = try await Self.run(["B=\n$B tenant create demo >/dev/null", block.text], server: server, environment: ["DATABASE_URL": database.connectionString])
            let shown = try #require(printed.last)
            #expect(shown.contains { $0.contains("pushes-per-second") && $0.hasSuffix(" 200") }, "\(shown)")
            // The last command lifted the stream limit: its printout (the last six lines) says so.
            #expect(shown.suffix(6).contains { $0.contains("streams") && $0.hasSuffix(" none") }, "\(shown)")
            #expect(shown.suffix(6).contains { $0.contains("storage-rows") && $0.hasSuffix(" 50000000") }, "\(shown)")
        }
    }

    /// docs/operations.md, "Webhooks": the admin's commands as printed, from adding an
    /// endpoint to removing it.
    @Test func theOperationsWebhookExampleRuns() async throws {
        let block = try #require(try Self.blocks(of: "docs/operations.md").first { $0.section == "Webhooks" && $0.language == "sh" })
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            let printed = try await Self.run(["B=\n$B tenant create demo >/dev/null", block.text], server: server, environment: ["DATABASE_URL": database.connectionString])
            let shown = try #require(printed.last)
            #expect(shown.contains { $0.contains("active  https://api.example.com/habitsync  collections habits,dailyProgress,globalStreak  with records") }, "\(shown)")
            #expect(shown.contains { $0.hasPrefix("paused ") } && shown.contains { $0.hasPrefix("resumed ") } && shown.contains { $0.hasPrefix("removed ") }, "\(shown)")
            #expect(shown.contains("0 deliveries to send again"), "\(shown)")
        }
    }

    /// docs/operations.md, "Waking iPhones": the admin's commands as printed, with a key made
    /// as Apple's .p8 files are (a P-256 key in PKCS#8 PEM).
    @Test func theOperationsAPNsExampleRuns() async throws {
        let block = try #require(try Self.blocks(of: "docs/operations.md").first { $0.section == "Waking iPhones" && $0.language == "sh" })
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            let prepare = "B=\n$B tenant create demo >/dev/null\nopenssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey_ABC123DEFG.p8"
            let printed = try await Self.run([prepare, block.text], server: server, environment: ["DATABASE_URL": database.connectionString])
            let shown = try #require(printed.last)
            #expect(shown.first?.hasPrefix("APNs key ABC123DEFG set for tenant demo (production, topic com.example.habits)") == true, "\(shown)")
            #expect(shown.contains { $0.contains("team TEAM123456") && $0.contains("wake at most every 60s") && !$0.contains("PRIVATE") }, "\(shown)")
            #expect(shown.last == "removed", "\(shown)")
        }
    }

    /// docs/operations.md, "Tracing": the command as printed starts a server that traces (its
    /// variables are ones `serve` takes; the collector it names need not be up: spans it cannot
    /// send are dropped), which serves and stops cleanly.
    @Test func theOperationsTracingExampleStartsATracedServer() async throws {
        let block = try #require(try Self.blocks(of: "docs/operations.md").first { $0.section == "Tracing" && $0.language == "sh" })
        let words = block.text.replacingOccurrences(of: "\\\n", with: " ").split(whereSeparator: \.isWhitespace).map(String.init)
        let variables = Array(words.prefix { $0.hasPrefix("OTEL_") && $0.contains("=") })
        #expect(variables.contains("OTEL_TRACES_EXPORTER=otlp") && variables.count >= 3, "\(words)")
        #expect(Array(words.dropFirst(variables.count)) == [".build/release/habitsync-server", "serve"], "\(words)")
        let database = try await TestPostgres.shared.migratedDatabase()
        let directory = try makeTemporaryDirectory("habitsync-tracing-example")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = ServerProcess(
            binary: HabitSyncBinary.url, databaseURL: database.connectionString, logDirectory: directory,
            extraArguments: ["--migrate", "off", "--migrations-dir", TestPostgres.migrationsDirectory.path], launcher: ["/usr/bin/env"] + variables)
        try await server.start()
        #expect(try await TestHTTP.awaitReady(server.baseURL) == 200)
        // SIGTERM: the exporter's last attempt is refused at once, and the server exits 0.
        server.send(SIGTERM)
        let status = await server.waitForExit(timeout: .seconds(120))
        if status == nil { await server.stop(grace: .seconds(1)) }
        #expect(status == 0, "\(server.logTail())")
    }

    @Test func theProtocolsCurlExamplesPrintWhatTheyShow() async throws {
        let blocks = try Self.blocks(of: "docs/protocol.md").filter { $0.section == "With curl" }
        // Each shell block, and the JSON block after it (what it prints) if there is one.
        var examples: [(command: String, shown: String?)] = []
        for block in blocks {
            if block.language == "sh" {
                examples.append((block.text, nil))
            } else if block.language == "json", let last = examples.indices.last, examples[last].shown == nil {
                examples[last].shown = block.text
            }
        }
        #expect(examples.count >= 5 && examples.filter { $0.shown != nil }.count >= 4, "\(examples.map(\.command))")
        let database = try await TestPostgres.shared.migratedDatabase()
        try await RunningServer.with(database: database) { server in
            let printed = try await Self.run(examples.map(\.command), server: server, environment: ["DATABASE_URL": database.connectionString]).map(Self.answers)
            for ((command, shown), answers) in zip(examples, printed) {
                guard let shown else { continue }
                #expect(!answers.isEmpty, "no answer printed for \(command.prefix(120))")
                for answer in answers {
                    Self.expectSame(shown, answer, "docs/protocol.md, \(command.split(separator: "\n").first ?? "")")
                }
            }
        }
    }
}
