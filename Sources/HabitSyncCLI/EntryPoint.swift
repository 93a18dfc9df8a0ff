import ArgumentParser
import Foundation

/// Runs the command line: usage errors print help (exit 64), command failures print
/// `error: …` to stderr (exit 1).
public enum HabitSyncEntryPoint {
    public static func main(_ arguments: [String]? = nil) async {
        // A reader of the output that goes away (a log shipper restarting, `| head`) makes a
        // write fail with EPIPE, which the log handler drops and counts; the default SIGPIPE
        // would end the process instead.
        signal(SIGPIPE, SIG_IGN)
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
