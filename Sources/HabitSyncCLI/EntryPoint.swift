import ArgumentParser
import Foundation
import HabitSyncServer

/// Runs the command line: usage errors print `error: …` and the usage (exit 64), command
/// failures `error: …` (exit 1), both to stderr.
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
            StandardError.write("error: \(failure.message)\n")
            exit(1)
        } catch {
            // --help and --version print to standard output and succeed, as ArgumentParser does.
            let code = HabitSyncCommand.exitCode(for: error)
            if code.isSuccess { HabitSyncCommand.exit(withError: error) }
            // A usage error is written as every other failure is: `error: …` (ArgumentParser's
            // own prefix is `Error:`), then the usage lines.
            var message = HabitSyncCommand.fullMessage(for: error)
            if message.hasPrefix("Error: ") { message = String(message.dropFirst("Error: ".count)) }
            StandardError.write("error: \(message)\n")
            exit(code.rawValue)
        }
    }
}
