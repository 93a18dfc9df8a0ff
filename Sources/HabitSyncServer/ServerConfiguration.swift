import LibPQClient

/// What `buildApplication` needs beyond its collaborators. Resolved from flags, environment
/// and defaults by the CLI.
public struct ServerConfiguration: Sendable {
    /// Settings for the sessions of the request pool, whose requests are short statements on
    /// one user's rows. No parallel query or JIT: the usage-streak query's generic plan went
    /// parallel, 14 ms against 1.5 ms without workers. Generic plans always (statements are
    /// prepared once per session): a custom plan over usage_events' monthly partitions can look
    /// cheaper and be re-planned each time, while a generic one prunes at run time; push at 16
    /// devices went from 6,617-6,961 to 7,458-7,505 records/s (BENCHMARKS.md). No sequential
    /// scans: every request statement is keyed by the token's user, and statistics gathered
    /// while a database had one user say a user owns the whole table, so the plan a session
    /// keeps scanned all of it for every later user (`PlansWithoutStatisticsTests`). With
    /// the setting off PostgreSQL still scans where no index applies.
    public static let requestSessionSettings = ["max_parallel_workers_per_gather": "0", "jit": "off", "plan_cache_mode": "force_generic_plan", "enable_seqscan": "off"]

    /// On a Citus coordinator (deploy/README.md, "Citus"): the request scope's `SET LOCAL`s go
    /// on to the workers, whose row-level security reads them, and every plan is a custom one
    /// (Citus cannot distribute a generic plan of several of the push statements: "could not
    /// create distributed plan"; with `auto` that would start after the fifth execution).
    public static let distributedRequestSessionSettings =
        requestSessionSettings
        .merging(["plan_cache_mode": "force_custom_plan", "citus.propagate_set_commands": "local"]) { $1 }

    /// How the request pool connects: as `role`, with `requestSessionSettings` (or the
    /// distributed ones). `serve` and the tests' servers both build their pool from this.
    public static func requestConnection(
        connectionString: String, role: String?, transactionPooling: Bool = false,
        namedPreparedStatements: Bool = true, distributed: Bool = false,
        notices: PGNoticeSink = .discard
    ) -> PGConnectionConfiguration {
        PGConnectionConfiguration(
            connectionString: connectionString, role: role,
            sessionSettings: distributed ? distributedRequestSessionSettings : requestSessionSettings,
            transactionPooling: transactionPooling, namedPreparedStatements: namedPreparedStatements, notices: notices,
            localSettingsAsCommands: distributed)
    }

    public var host: String
    /// 0 picks a free port (tests); the bound port is reported through `onServerRunning`.
    public var port: Int
    /// Applies to every statement of a request's transaction.
    public var statementTimeout: Duration
    public var serverName: String
    public var limits: SyncLimits
    /// Memory for push bodies being decoded at once (`RequestBodyBudget`).
    public var bodyBudgetBytes: Int
    /// Bounds of the event streams (`GET /v1/sync/events`).
    public var realtime = RealtimeLimits()
    /// Timeouts for slow clients and the cap on open connections.
    public var connections = ConnectionLimits()
    /// Statistics and exports one user may run at once (429 beyond).
    public var expensiveReadsPerUser = 2
    /// Identity providers' keys: refresh, outage tolerance, what fetches may reach.
    public var identity = IdentitySettings()
    /// Per-tenant quotas: how long limits are cached, how often storage is counted, how many
    /// replicas share each limit (docs/operations.md, "Tenant quotas").
    public var tenantQuotas = TenantQuotas.Settings()
    /// How often this replica adds what it counted to `tenant_usage` (docs/analytics.md).
    public var meterFlushInterval: Duration = ServerConfiguration.defaultMeterFlushInterval
    public static let defaultMeterFlushInterval: Duration = .seconds(10)
    /// How often this replica counts a served tenant's stored rows for `tenant_usage`.
    public var meterStoredRowsInterval: Duration = .seconds(3600)
    /// How many tenants get a `tenant` label of their own on `/metrics` (the rest: `other`).
    public var metricsTenants = TenantMetricLabels().limit
    /// Each request a trace (`RequestTracingMiddleware`): on when `serve` found tracing turned
    /// on in the environment (`ServerTracing`) and bootstrapped the tracer.
    public var tracing = false
    /// Traces name the user (`enduser.id`), not only the tenant (`--trace-user-ids`).
    public var traceUserIDs = false
    /// The webhook deliverer (docs/operations.md, "Webhooks").
    public var webhooks = WebhookSettings()
    /// The APNs background wakes (docs/operations.md, "Waking iPhones").
    public var wakes = WakeSettings()

    public init(
        host: String = "127.0.0.1", port: Int = 8080, statementTimeout: Duration = .seconds(5), serverName: String = "habitsync-server",
        limits: SyncLimits = SyncLimits(), bodyBudgetBytes: Int = 128 * 1024 * 1024
    ) {
        self.host = host
        self.port = port
        self.statementTimeout = statementTimeout
        self.serverName = serverName
        self.limits = limits
        self.bodyBudgetBytes = bodyBudgetBytes
    }
}
