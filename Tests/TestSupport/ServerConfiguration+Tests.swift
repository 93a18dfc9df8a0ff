import HabitSyncServer

extension ServerConfiguration {
    /// The in-process servers' configuration in tests: a loopback port of the system's choice
    /// and a statement timeout of 120 s rather than 5. A busy machine (CI building beside the
    /// suite, PgBouncer's three server connections) stretched a push's wait for its user's lock
    /// past 5 s and turned it into a 503; tests that mean a timeout set their own.
    public static var forTests: ServerConfiguration {
        ServerConfiguration(host: "127.0.0.1", port: 0, statementTimeout: .seconds(120))
    }
}
