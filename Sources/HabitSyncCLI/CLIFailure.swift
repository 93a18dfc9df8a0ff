/// A command failure: the message goes to stderr and the exit status is 1.
struct CLIFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
