/// What `buildApplication` needs beyond its collaborators. Resolved from flags, environment
/// and defaults by the CLI.
public struct ServerConfiguration: Sendable {
    /// Settings for the sessions of the request pool. Requests are short statements on one
    /// user's rows: the generic plan of the usage-streak query over the partitioned
    /// usage_events went parallel, and starting the workers took 10+ ms of a push that needed
    /// 1 ms (pg_stat_statements: 21 ms a call under load). JIT compiling would cost the same way.
    public static let requestSessionSettings = ["max_parallel_workers_per_gather": "0", "jit": "off"]

    public var host: String
    /// 0 picks a free port (tests); the bound port is reported through `onServerRunning`.
    public var port: Int
    /// Applies to every statement of a request's transaction.
    public var statementTimeout: Duration
    public var serverName: String
    public var limits: SyncLimits

    public init(host: String = "127.0.0.1", port: Int = 8080, statementTimeout: Duration = .seconds(5), serverName: String = "habitsync-server", limits: SyncLimits = SyncLimits()) {
        self.host = host
        self.port = port
        self.statementTimeout = statementTimeout
        self.serverName = serverName
        self.limits = limits
    }
}
