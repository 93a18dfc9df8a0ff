import ArgumentParser
import Foundation
import TestSupport
import Testing

@testable import HabitSyncCLI

/// Issue 45, item 6: every diagnostic starts `error: `, whichever command and however it fails
/// (a usage error ArgumentParser finds printed `Error:`; a command's own failure `error:`).
@Suite struct DiagnosticPrefixTests {
    /// Every command path, e.g. `["tenant", "create"]`, leaves and groups alike.
    static func commandPaths(_ command: any ParsableCommand.Type = HabitSyncCommand.self, prefix: [String] = []) -> [[String]] {
        command.configuration.subcommands.flatMap { sub -> [[String]] in
            let path = prefix + [sub._commandName]
            return [path] + commandPaths(sub, prefix: path)
        }
    }

    @Test func everyCommandsUsageErrorSaysErrorLowerCase() async throws {
        let paths = Self.commandPaths()
        #expect(paths.count >= 20, "\(paths)")
        // Two ways to misuse each: an unknown option, and an option value that cannot parse.
        for path in [[]] + paths {
            for misuse in [["--no-such-option"], ["--log-level", "loudest"]] {
                let run = try await HabitSyncBinary.run(path + misuse, environment: ["DATABASE_URL": "host=127.0.0.1 port=1"])
                #expect(run.status != 0, "\(path + misuse)")
                #expect(run.stderr.hasPrefix("error: ") && !run.stderr.contains("Error:"), "\(path + misuse): \(run.stderr)")
            }
        }
    }

    @Test func aCommandsOwnFailureSaysErrorLowerCase() async throws {
        // Runs, and fails: nothing listens on port 1.
        let run = try await HabitSyncBinary.run(["tenant", "list"], environment: ["DATABASE_URL": "host=127.0.0.1 port=1 connect_timeout=2"])
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("error: ") || run.stderr.contains("\nerror: "), "\(run.stderr)")
        #expect(!run.stderr.contains("Error:"), "\(run.stderr)")
    }
}
