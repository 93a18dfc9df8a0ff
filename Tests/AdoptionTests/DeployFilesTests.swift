import Foundation
import TestSupport
import Testing

/// Issue 45, items 4 and 5: the deploy files work as written. No Docker engine or systemd
/// runs here, so each is checked as far as this machine can: the image's build context is
/// exactly what its `COPY` lines copy, and SwiftPM reads the package from it; the systemd unit
/// verifies and is sandboxed.
@Suite struct DeployFilesTests {
    static let root = ClientPackageTests.root

    /// The Dockerfile's stages: each `FROM` line and the lines after it.
    static func stages() throws -> [[String]] {
        let text = try String(contentsOf: root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        var stages: [[String]] = []
        var continued = ""
        for raw in text.split(separator: "\n").map(String.init) where !raw.hasPrefix("#") {
            // A line ending in `\` goes on in the next.
            if raw.hasSuffix("\\") {
                continued += raw.dropLast() + " "
                continue
            }
            let line = (continued + raw).trimmingCharacters(in: .whitespaces)
            continued = ""
            if line.hasPrefix("FROM ") { stages.append([]) }
            if !line.isEmpty, !stages.isEmpty { stages[stages.count - 1].append(line) }
        }
        return stages
    }

    /// The names of the targets `Package.swift` declares.
    static func declaredTargets() throws -> Set<String> {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let pattern = try Regex(#"\.(?:target|testTarget|executableTarget|systemLibrary)\(\s*name:\s*"([^"]+)""#)
        return Set(manifest.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) })
    }

    @Test func theImagesBuildContextHoldsThePackage() async throws {
        let stages = try Self.stages()
        try #require(stages.count >= 2, "a multi-stage image: \(stages)")
        // The build stage's context: what its COPY lines (those from the context) copy.
        let sources = stages[0].filter { $0.hasPrefix("COPY ") && !$0.contains("--from") }.map { $0.split(separator: " ")[1] }.map(String.init)
        #expect(sources.contains("Package.swift"))
        let context = try makeTemporaryDirectory("habitsync-image-context")
        defer { try? FileManager.default.removeItem(at: context) }
        for source in sources {
            try FileManager.default.copyItem(at: Self.root.appendingPathComponent(source), to: context.appendingPathComponent(source))
        }
        // SwiftPM reads the package there: every declared target's folder is in the context.
        // (Before Domain/ and Client/ were copied: "invalid custom path 'Domain/Sources/HabitSyncDomain'".)
        let swift = URL(fileURLWithPath: "/usr/bin/env")
        let described = try await HabitSyncBinary.run(executable: swift, ["swift", "package", "describe", "--type", "json"], in: context)
        #expect(described.status == 0, "\(described.stderr)")
        let package = try #require(try JSONSerialization.jsonObject(with: Data(described.stdout.utf8)) as? [String: Any])
        let targets = Set((package["targets"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        let declared = try Self.declaredTargets()
        #expect(declared.count >= 30 && targets == declared, "\(targets.symmetricDifference(declared))")
        // The binary is the build's product, built with the Swift runtime in it.
        #expect(stages[0].contains { $0.contains("swift build -c release --product habitsync-server --static-swift-stdlib") })
    }

    @Test func theImageRunsTheBinaryAloneAsAUserThatIsNotRoot() throws {
        let runtime = try #require(try Self.stages().last)
        // Only the build stage's output reaches it: the binary, nothing beside it to forget.
        let copies = runtime.filter { $0.hasPrefix("COPY ") }
        #expect(!copies.isEmpty && copies.allSatisfy { $0.contains("--from=build") }, "\(copies)")
        let user = try #require(runtime.last { $0.hasPrefix("USER ") }, "the runtime stage sets no USER")
        let name = user.dropFirst("USER ".count).trimmingCharacters(in: .whitespaces)
        #expect(name != "root" && name != "0" && !name.hasPrefix("0:"), "\(user)")
        #expect(runtime.contains { $0.contains("useradd") && $0.contains(name) }, "the user is created in the image")
        #expect(runtime.contains { $0.hasPrefix("ENTRYPOINT") && $0.contains("/app/habitsync-server") })
    }

    /// The tracing examples send to a collector that listens where they send (docs/operations.md,
    /// "Tracing"): compose's server to its collector service over OTLP/HTTP; Kubernetes'
    /// `$(NAME)` references only to variables listed before them, which is all it expands.
    @Test func theTracingExamplesReachTheirCollector() throws {
        let compose = try String(contentsOf: Self.root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        #expect(compose.contains("OTEL_TRACES_EXPORTER: otlp") && compose.contains("OTEL_EXPORTER_OTLP_ENDPOINT: http://otel-collector:4318"))
        #expect(compose.contains("\n  otel-collector:\n") && compose.contains("./deploy/otel-collector.yaml:/etc/otelcol/config.yaml"))
        let collector = try String(contentsOf: Self.root.appendingPathComponent("deploy/otel-collector.yaml"), encoding: .utf8)
        #expect(collector.contains("http:\n        endpoint: 0.0.0.0:4318") && collector.contains("receivers: [otlp]"))

        let deployment = try String(contentsOf: Self.root.appendingPathComponent("deploy/kubernetes/deployment.yaml"), encoding: .utf8)
        var listed: Set<String> = []
        let name = try Regex(#"name: ([A-Z_]+)"#), reference = try Regex(#"\$\(([A-Z_]+)\)"#)
        for line in deployment.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") {
            for match in line.matches(of: reference) {
                let referenced = String(match.output[1].substring ?? "")
                #expect(listed.contains(referenced), "$(\(referenced)) is used before it is listed: \(line)")
            }
            if let match = line.firstMatch(of: name) { listed.insert(String(match.output[1].substring ?? "")) }
        }
        #expect(listed.isSuperset(of: ["OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_SAMPLER"]))
    }

    @Test func theSystemdUnitVerifiesAndIsSandboxed() async throws {
        let unit = try String(contentsOf: Self.root.appendingPathComponent("deploy/systemd/habitsync-server.service"), encoding: .utf8)
        #expect(unit.contains("\nDynamicUser=yes\n"), "the unit makes its own user")
        // Verified as installed, but with this build's binary where the unit expects it (the
        // install path does not exist on this machine).
        let installed = "ExecStart=/opt/habitsync/habitsync-server serve"
        #expect(unit.contains(installed))
        let folder = try makeTemporaryDirectory("habitsync-systemd")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("habitsync-server.service")
        try unit.replacingOccurrences(of: installed, with: "ExecStart=\(HabitSyncBinary.url.path) serve").write(to: file, atomically: true, encoding: .utf8)
        let analyze = URL(fileURLWithPath: "/usr/bin/env")
        let verified = try await HabitSyncBinary.run(executable: analyze, ["systemd-analyze", "verify", file.path])
        #expect(verified.status == 0 && verified.stderr.isEmpty && verified.stdout.isEmpty, "\(verified.stdout)\(verified.stderr)")
        let security = try await HabitSyncBinary.run(executable: analyze, ["systemd-analyze", "security", "--offline=true", "--no-pager", file.path])
        let overall = try #require(security.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") }, "\(security.stdout)\(security.stderr)")
        let score = try #require(overall.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(overall)")
        #expect(score <= 4.0, "\(overall)")
    }
}
