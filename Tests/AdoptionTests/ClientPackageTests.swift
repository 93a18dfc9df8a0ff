import Foundation
import ServerHarness
import TestSupport
import Testing

/// Issue 31: an app adds the SDK as `docs/client.md` says. A copy of this repository, tagged
/// with the release version, stands in for its URL; an app package made of the page's own
/// dependency lines and every Swift example on the page (in order, as one program) is built
/// with SwiftPM, and its sync against a real server is checked from the server's side.
@Suite struct ClientPackageTests {
    static let root = TestPostgres.migrationsDirectory.deletingLastPathComponent()
    /// The page's placeholder for the server, replaced by the test server's address.
    static let documentedServer = "https://sync.example.com/"

    struct ClientPage {
        /// `.package(url: …, from: …)` as printed.
        var packageLine: String
        /// `.product(name: "HabitSyncClient", package: …)` as printed.
        var productReference: String
        /// Every other Swift block of the page, in order.
        var examples: [String]
    }

    static func clientPage() throws -> ClientPage {
        let page = try String(contentsOf: root.appendingPathComponent("docs/client.md"), encoding: .utf8)
        var blocks: [(marked: Bool, text: String)] = []
        var rest = page[...]
        while let open = rest.range(of: "```swift\n") {
            let marked = rest[..<open.lowerBound].hasSuffix("<!-- app-package -->\n")
            guard let close = rest.range(of: "```", range: open.upperBound..<rest.endIndex) else { break }
            // Blocks inside a list item are indented: take the indentation of the fence off.
            let lineStart = rest[..<open.lowerBound].lastIndex(of: "\n").map { rest.index(after: $0) } ?? rest.startIndex
            let indent = rest[lineStart..<open.lowerBound].count
            let lines = rest[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
            blocks.append((marked, lines.joined(separator: "\n")))
            rest = rest[close.upperBound...]
        }
        let package = try #require(blocks.first { $0.marked }?.text, "docs/client.md has no <!-- app-package --> block")
        let packageLine = try #require(package.split(separator: "\n").first { $0.contains(".package(url:") }, "no .package(url:) line")
        let product = try #require(package.firstMatch(of: /\.product\(name: "HabitSyncClient", package: "[^"]+"\)/), "no .product(name: \"HabitSyncClient\", …)")
        return ClientPage(
            packageLine: packageLine.trimmingCharacters(in: .whitespaces).replacing(/,$/, with: ""),
            productReference: String(product.output), examples: blocks.filter { !$0.marked }.map(\.text))
    }

    /// What the page's examples assume of the app (its "Setup" says so): a signed-in account,
    /// an installation id and a logger. Here the token comes from the environment.
    static let appPrelude = """
        import Foundation

        struct Account: Sendable {
            let userID = "ada"
            func accessToken() async throws -> String { ProcessInfo.processInfo.environment["APP_TOKEN"] ?? "" }
        }
        struct AppLogger: Sendable {
            func notice(_ line: String) { print("log: \\(line)") }
        }
        let account = Account()
        let installationID = "adoption-phone"
        let logger = AppLogger()
        """

    /// After the examples: stop the automatic syncs, sync once more so the end state is the
    /// server's, and say what the store holds.
    static let appEpilogue = """

        syncTask.cancel()
        let last = try await engine.sync()
        print("app: pending \\(try store.pendingCount()), habits \\(try store.fetchAll(Habit.self).count), last sync pulled \\(last.pulled)")
        """

    @Test func anAppBuiltFromTheDocsSyncsAgainstTheServer() async throws {
        let page = try Self.clientPage()
        #expect(page.examples.count >= 4, "the Swift examples of docs/client.md: \(page.examples.count)")
        let version = try await HabitSyncBinary.run(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(page.packageLine.contains("from: \"\(version)\""), "docs/client.md names \(page.packageLine), the release is \(version)")
        let url = try #require(page.packageLine.firstMatch(of: /url: "([^"]+)"/)).output.1
        let identity = try #require(url.split(separator: "/").last).replacing(/\.git$/, with: "")
        #expect(page.productReference.contains("package: \"\(identity)\""), "\(page.productReference) names another package than \(url)")

        let folder = try makeTemporaryDirectory("habitsync-adoption")
        defer { try? FileManager.default.removeItem(at: folder) }
        // This checkout as it is (tracked and new files, not what git ignores), committed and
        // tagged in a repository named as the URL's last part, so SwiftPM gives it the identity
        // the page's `.product(…, package:)` names.
        let repository = folder.appendingPathComponent(String(identity))
        let copied = try await HabitSyncBinary.run(
            executable: URL(fileURLWithPath: "/bin/bash"),
            [
                "-c",
                """
                set -euo pipefail
                mkdir -p "$2"
                git -C "$1" ls-files -z --cached --others --exclude-standard | (cd "$1" && tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C "$2"
                cd "$2"
                git init -q
                git add -A
                git -c user.name=adoption -c user.email=adoption@example.com commit -qm "the checkout under test"
                git tag "$3"
                """, "copy", Self.root.path, repository.path, version,
            ])
        try #require(copied.status == 0, "copying the checkout: \(copied.stderr)")

        let app = folder.appendingPathComponent("app")
        let sources = app.appendingPathComponent("Sources/MyApp")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        let packageLine = page.packageLine.replacingOccurrences(of: String(url), with: repository.absoluteURL.absoluteString)
        try """
        // swift-tools-version:6.2
        import PackageDescription

        let package = Package(
            name: "MyApp",
            platforms: [.macOS(.v15), .iOS(.v17)],
            dependencies: [
                \(packageLine),
            ],
            targets: [
                .executableTarget(name: "MyApp", dependencies: [\(page.productReference)]),
            ]
        )
        """.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try Self.appPrelude.write(to: sources.appendingPathComponent("App.swift"), atomically: true, encoding: .utf8)

        let database = try await TestPostgres.shared.migratedDatabase()
        let env = ["DATABASE_URL": database.connectionString]
        #expect(try await HabitSyncBinary.run(["tenant", "create", "adoption"], environment: env).status == 0)
        let minted = try await HabitSyncBinary.run(["token", "mint", "--tenant", "adoption", "--user", "ada"], environment: env)
        let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(minted.status == 0 && !token.isEmpty, "\(minted.stderr)")

        try await RunningServer.with(database: database) { server in
            // The examples as printed, imports first, with this server for the page's.
            let examples = page.examples.joined(separator: "\n\n")
            #expect(examples.contains(Self.documentedServer))
            let lines = examples.replacingOccurrences(of: Self.documentedServer, with: server.baseURL + "/").split(separator: "\n", omittingEmptySubsequences: false)
            let main =
                lines.filter { $0.hasPrefix("import ") }.joined(separator: "\n") + "\n\n"
                + lines.filter { !$0.hasPrefix("import ") }.joined(separator: "\n") + Self.appEpilogue + "\n"
            try main.write(to: sources.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)

            let built = try await HabitSyncBinary.run(
                executable: URL(fileURLWithPath: "/usr/bin/env"),
                ["swift", "build", "--package-path", app.path, "--product", "MyApp"], in: app)
            try #require(built.status == 0, "the app did not build:\n\(built.stdout.suffix(6_000))\n\(built.stderr.suffix(3_000))\n--- main.swift\n\(main)")
            // Only the SDK's part of the repository was built.
            let modules = (try? FileManager.default.contentsOfDirectory(atPath: app.appendingPathComponent(".build/debug/Modules").path)) ?? []
            #expect(modules.contains("HabitSyncClient.swiftmodule"), "\(modules)")
            #expect(!modules.contains { $0.hasPrefix("Hummingbird") || $0.hasPrefix("LibPQClient") || $0.hasPrefix("HabitSyncServer") }, "the app built the server: \(modules)")

            // The page's engine uses URLSession's default 60 s per request: on a loaded machine
            // an answer can take longer. The app is run again then, as a user would open it
            // again: its store and outbox carry on where the last run stopped.
            let data = folder.appendingPathComponent("data")
            let launch = {
                try await HabitSyncBinary.run(
                    executable: app.appendingPathComponent(".build/debug/MyApp"), [],
                    environment: ["APP_TOKEN": token, "XDG_DATA_HOME": data.path, "HOME": data.path], in: app)
            }
            var ran = try await launch()
            for _ in 0..<3 where ran.status != 0 && (ran.stderr + ran.stdout).contains("Code=-1001") { ran = try await launch() }
            try #require(ran.status == 0, "the app failed: \(ran.stdout.suffix(3_000))\n\(ran.stderr.suffix(3_000))")
            #expect(ran.stdout.contains("app: pending 0, habits 0"), "\(ran.stdout)")

            // What the examples did, as the server holds it: the habit made, edited, completed
            // and deleted; the XP; the time zone.
            let device = DeviceClient(baseURL: server.baseURL, token: token, device: "checker")
            let pulled = try await device.pull(cursor: nil, limit: 500)
            #expect(pulled.status == 200, "\(pulled.text.prefix(500))")
            let changes = (try pulled.json()["changes"] as? [[String: Any]]) ?? []
            func records(_ collection: String) -> [[String: Any]] { changes.filter { $0["collection"] as? String == collection } }
            // The habit was deleted: a pull from scratch leaves out its tombstone.
            #expect(records("habits").isEmpty, "\(records("habits"))")
            let xp = records("xpTransactions").compactMap { $0["record"] as? [String: Any] }
            #expect(xp.contains { $0["reason"] as? String == "finished a book" && $0["amount"] as? Int == 50 }, "\(xp)")
            let settings = records("userSettings").compactMap { $0["record"] as? [String: Any] }
            #expect(settings.count == 1 && (settings.first?["timezone"] as? String)?.isEmpty == false, "\(settings)")
            print("Adoption: the app from docs/client.md (\(page.examples.count) examples) built against \(identity) \(version) and synced: \(changes.count) records on the server")
        }
    }
}
