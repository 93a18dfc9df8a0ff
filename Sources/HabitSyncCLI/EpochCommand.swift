import ArgumentParser
import Foundation
import HabitSyncStore

/// `habitsync-server epoch show | rotate`: the restore runbook of docs/operations.md.
struct EpochCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "epoch",
        abstract: "Show or rotate the database's sync epoch (rotate after restoring a backup, before serving).",
        subcommands: [Show.self, Rotate.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the current sync epoch and when it was made.")

        @OptionGroup var common: CommonOptions
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let current = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server epoch") { pool in
                try await EpochStore(pool: pool).current()
            }
            let since = ISO8601DateFormatter().string(from: current.rotatedAt)
            if json {
                let object: [String: Any] = ["epoch": current.epoch, "rotatedAt": since]
                try JSONLine.print(object)
            } else {
                print("sync epoch \(current.epoch) since \(since)")
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a new sync epoch: devices that synced with the database before it was restored push again what it lacks.",
            discussion: """
                Run it once on a database restored from a backup, before any server serves from it. Each user's counter
                becomes the high-water mark their devices are told: a device pushes again every record it holds above
                it, with its outbox, then pulls from scratch. Harmless at any other time, but every device re-sends
                what it holds above its user's counter then (nothing).
                """)

        @OptionGroup var common: CommonOptions
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let rotation = try await common.withOwnerPool(logger: try common.makeQuietLogger(), applicationName: "habitsync-server epoch") { pool in
                try await EpochStore(pool: pool).rotate()
            }
            if json {
                let object: [String: Any] = ["previous": rotation.previous, "epoch": rotation.current, "users": rotation.users]
                try JSONLine.print(object)
            } else {
                print("sync epoch \(rotation.previous) → \(rotation.current); \(rotation.users) users: their devices push again what they hold above each user's counter")
            }
        }
    }
}
