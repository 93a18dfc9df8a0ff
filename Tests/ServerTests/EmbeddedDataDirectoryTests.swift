import EmbeddedPostgres
import Foundation
import TestSupport
import Testing

@testable import HabitSyncCLI

/// Issue 31: commands find their embedded database wherever they are run from, or refuse
/// naming the folder they looked in; they never fill a second, empty one.
@Suite struct EmbeddedDataDirectoryTests {
    @Test func theDefaultIsTheCheckoutTheBinaryWasBuiltIn() throws {
        let folder = try makeTemporaryDirectory("habitsync-checkout")
        defer { try? FileManager.default.removeItem(at: folder) }
        let checkout = folder.appendingPathComponent("habitsync")
        let elsewhere = folder.appendingPathComponent("elsewhere")
        for path in [".build/x86_64-unknown-linux-gnu/release", ".build/debug"] {
            try FileManager.default.createDirectory(at: checkout.appendingPathComponent(path), withIntermediateDirectories: true)
        }
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let release = checkout.appendingPathComponent(".build/x86_64-unknown-linux-gnu/release/habitsync-server")
        let debug = checkout.appendingPathComponent(".build/debug/habitsync-server")
        // Not a checkout yet: no Package.swift beside .build.
        #expect(EmbeddedDataDirectory.checkout(containing: release) == nil)
        #expect(EmbeddedDataDirectory.resolve(named: nil, executable: release, currentDirectory: elsewhere).path == elsewhere.path + "/.habitsync")
        try "// swift-tools-version:6.2\n".write(to: checkout.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        for binary in [release, debug] {
            #expect(EmbeddedDataDirectory.resolve(named: nil, executable: binary, currentDirectory: elsewhere).path == checkout.path + "/.habitsync")
        }
        // A named folder is the caller's, relative to where it runs.
        #expect(EmbeddedDataDirectory.resolve(named: "data", executable: release, currentDirectory: elsewhere).path == elsewhere.path + "/data")
        #expect(EmbeddedDataDirectory.resolve(named: "/srv/habitsync", executable: release, currentDirectory: elsewhere).path == "/srv/habitsync")
        // A binary installed outside any checkout.
        #expect(
            EmbeddedDataDirectory.resolve(named: nil, executable: URL(fileURLWithPath: "/usr/local/bin/habitsync-server"), currentDirectory: elsewhere).path
                == elsewhere.path + "/.habitsync")
    }

    @Test func anAdminCommandThatFindsNoDatabaseRefusesAndCreatesNone() async throws {
        let folder = try makeTemporaryDirectory("habitsync-nodatabase")
        defer { try? FileManager.default.removeItem(at: folder) }
        let named = folder.appendingPathComponent("data")
        let requested = named.appendingPathComponent("postgres")
        for command in [["tenant", "list"], ["migrate", "up", "--migrations-dir", TestPostgres.migrationsDirectory.path], ["token", "mint", "--tenant", "demo", "--user", "alice"]] {
            let outcome = try await HabitSyncBinary.run(command, environment: ["DATABASE_URL": "", "HABITSYNC_DATA_DIR": named.path], in: folder)
            #expect(outcome.status == 1, "\(command): \(outcome.stderr)")
            #expect(outcome.stderr.contains("no embedded database at \(requested.path)") && outcome.stderr.contains("embedded list"), "\(command): \(outcome.stderr)")
            #expect(!FileManager.default.fileExists(atPath: named.path), "\(command) created \(named.path)")
            #expect(!FileManager.default.fileExists(atPath: EmbeddedPostgres.reachableDirectory(for: requested).path))
        }
        let removed = try await HabitSyncBinary.run(["embedded", "remove", folder.path], environment: ["DATABASE_URL": ""], in: folder)
        #expect(removed.status == 1 && removed.stderr.contains("is not an embedded habitsync database"), "\(removed.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.path), "a folder that is not a cluster is never removed")
    }
}
