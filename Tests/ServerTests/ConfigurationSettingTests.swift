import ArgumentParser
import Foundation
import Logging
import Testing

@testable import HabitSyncCLI

/// Each setting is declared once (`ServeSettings`, `CommonSettings`): `--help` is written from
/// the declaration, and the README's configuration table must say the same.
@Suite struct ConfigurationSettingTests {
    static let declared = ServeSettings.all + CommonSettings.all

    /// The README's configuration rows by flag: (variable, default) with backticks removed.
    static func readmeRows() throws -> [String: (variable: String, shownDefault: String)] {
        let readme = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("README.md"), encoding: .utf8)
        var rows: [String: (String, String)] = [:]
        for line in readme.split(separator: "\n") where line.hasPrefix("| `--") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { cell in
                String(cell).trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
            }
            guard cells.count >= 5 else { continue }
            rows[String(cells[1].dropFirst(2))] = (cells[2], cells[3])
        }
        return rows
    }

    @Test func theReadmeTableShowsEachDeclaredSettingAsDeclared() throws {
        let rows = try Self.readmeRows()
        // Every flag `serve --help` lists is declared, but the three that say where things are.
        let listed = Set(
            ServeCommand.helpMessage().split(separator: "\n").compactMap { line -> String? in
                let option = line.drop { $0 == " " }
                guard option.hasPrefix("--") else { return nil }
                return String(option.dropFirst(2).prefix { $0.isLetter || $0 == "-" })
            })
        #expect(listed.count > 30 && listed.subtracting(Self.declared.map(\.flag)) == ["database-url", "data-dir", "migrations-dir"], "\(listed)")
        for setting in Self.declared {
            let row = try #require(rows[setting.flag], "the README has no row for --\(setting.flag)")
            #expect(row.variable == setting.environmentVariable, "--\(setting.flag)")
            #expect(row.shownDefault == setting.defaultText, "--\(setting.flag): README \(row.shownDefault), declared \(setting.defaultText ?? "none")")
        }
    }

    /// A shown default reads back as the default used, and a choice's default is one of its words.
    @Test func shownDefaultsReadBackAsTheDefaults() throws {
        let durations = [
            ServeSettings.statementTimeout, ServeSettings.drainTimeout, ServeSettings.maxClockSkew, ServeSettings.poolLeaseTimeout,
            ServeSettings.streamHeartbeat, ServeSettings.streamLifetime, ServeSettings.streamIdleTimeout, ServeSettings.headerTimeout,
            ServeSettings.keepAliveTimeout, ServeSettings.bodyTimeout, ServeSettings.bodyRateGrace, ServeSettings.issuerKeyRefresh,
            ServeSettings.issuerUnknownKeyRefresh, ServeSettings.issuerKeyMaxStaleness, ServeSettings.issuerFetchTimeout,
            CommonSettings.migrationLockTimeout,
        ]
        for setting in durations {
            #expect(setting.parse(try #require(setting.defaultText)) == setting.defaultValue, "--\(setting.flag)")
        }
        for setting in [
            ServeSettings.port, ServeSettings.poolSize, ServeSettings.maxBatchChanges, ServeSettings.maxStreamsPerUser, ServeSettings.maxStreams,
            ServeSettings.bodyMinRate, ServeSettings.maxExpensiveReadsPerUser,
        ] {
            #expect(setting.parse(try #require(setting.defaultText)) == setting.defaultValue, "--\(setting.flag)")
        }
        for setting in [ServeSettings.maxBodyBytes, ServeSettings.decodeBudget] {
            #expect(setting.parse(String(try #require(setting.defaultText?.split(separator: " ").first))) == setting.defaultValue, "--\(setting.flag)")
        }
        for setting in [
            ServeSettings.requestPooling, ServeSettings.routeToNodes, ServeSettings.preparedStatements, ServeSettings.issuerPrivateAddresses,
            ServeSettings.issuerLoopbackHTTP,
        ] {
            #expect(setting.parse(try #require(setting.defaultText)) == setting.defaultValue, "--\(setting.flag)")
        }
        #expect(ServeSettings.migrate.parse("auto") == .auto && ServeSettings.migrate.defaultValue == .auto)
        #expect(CommonSettings.logLevel.parse("info") == .info && CommonSettings.logLevel.defaultValue == .info)
        #expect(CommonSettings.logFormat.parse("json") == CommonSettings.logFormat.defaultValue)
    }

    @Test func durationsAreWrittenAsTheyAreRead() {
        for duration: Duration in [.milliseconds(250), .seconds(5), .seconds(60), .seconds(90), .seconds(300), .seconds(3600), .seconds(86_400)] {
            #expect(ConfigurationValue.duration(ConfigurationValue.describe(duration)) == duration, "\(ConfigurationValue.describe(duration))")
        }
        #expect(ConfigurationValue.describe(.seconds(86_400)) == "24h" && ConfigurationValue.describe(.seconds(90)) == "90s")
    }

    /// A refused value names where it came from and the rule, as before the declarations.
    @Test func aRefusedValueNamesItsFlagAndRule() throws {
        for (arguments, expected) in [
            (["--pool-size", "0"], "--pool-size '0': must be a whole number from 1 to 500"),
            (["--statement-timeout", "0s"], "--statement-timeout '0s': must be a positive duration such as 5s"),
            (["--issuer-fetch-timeout", "5m"], "--issuer-fetch-timeout '5m': must be a duration from 100ms to 1m"),
            (["--request-pooling", "yes"], "--request-pooling 'yes': must be session or transaction"),
            (["--migrate", "sometimes"], "--migrate 'sometimes': must be auto, check or off"),
        ] {
            #expect {
                try ServeCommand.parse(arguments).resolveSettings()
            } throws: { error in
                String(describing: error).contains(expected)
            }
        }
    }
}
