import ArgumentParser
import Foundation

/// Runs the command line: usage errors print help (exit 64), command failures print
/// `error: …` to stderr (exit 1).
public enum HabitSyncEntryPoint {
    public static func main(_ arguments: [String]? = nil) async {
        do {
            var command = try HabitSyncCommand.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CLIFailure {
            FileHandle.standardError.write(Data("error: \(failure.message)\n".utf8))
            exit(1)
        } catch {
            HabitSyncCommand.exit(withError: error)
        }
    }
}
