import HabitSyncServer

extension ServerConfiguration {
    /// The in-process servers' configuration in tests: a loopback port of the system's choice
    /// and a statement timeout of 120 s rather than 5. A busy machine (CI building beside the
    /// suite, PgBouncer's three server connections) stretched a push's wait for its user's lock
    /// past 5 s and turned it into a 503; tests that mean a timeout set their own.
    /// Slow-client limits are generous too (a test that means them sets its own): a starved
    /// event loop must not cut a test's own requests off.
    public static var forTests: ServerConfiguration {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, statementTimeout: .seconds(120))
        configuration.connections.headerTimeout = .seconds(120)
        configuration.connections.keepAliveTimeout = .seconds(600)
        configuration.connections.bodyTimeout = .seconds(600)
        configuration.connections.bodyGrace = .seconds(120)
        // No webhook deliverer or APNs waker polling beside every test's server (each would
        // lease a pool connection every second across the suite's hundreds of servers, and
        // the deliverer starts a thread pool): the tests of them turn them on.
        configuration.webhooks.enabled = false
        configuration.wakes.enabled = false
        return configuration
    }
}
