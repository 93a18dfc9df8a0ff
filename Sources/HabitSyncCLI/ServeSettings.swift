import GuardedFetch
import HabitSyncServer
import HabitSyncStore

/// `serve`'s settings, each declared once (`ConfigurationSetting`): flag, environment variable,
/// default, rule and help. The defaults of limits the server package owns are read from its
/// types (`RealtimeLimits`, `ConnectionLimits`, `IdentitySettings`), not written again.
enum ServeSettings {
    static let host = ConfigurationSetting<String>(
        flag: "host", environmentVariable: "HABITSYNC_HOST", summary: "Address to listen on.", valueName: "host", defaultValue: "127.0.0.1",
        defaultText: "127.0.0.1", rule: "must be a host name or IP address", parse: { $0.isEmpty || $0.contains(" ") ? nil : $0 })
    static let port = ConfigurationSetting<Int>.count(
        "port", "HABITSYNC_PORT", "Port to listen on (0 picks a free one).", default: 8080, in: 0...65535, valueName: "port")
    static let migrate = ConfigurationSetting<ServeCommand.MigrateMode>.choice(
        "migrate", "HABITSYNC_MIGRATE",
        "auto applies pending migrations first; check refuses to start while any are pending; off skips both.",
        ["auto": .auto, "check": .check, "off": .off], default: "auto", valueName: "mode")
    static let poolSize = ConfigurationSetting<Int>.count("pool-size", "HABITSYNC_POOL_SIZE", "Database connections for requests.", default: 10, in: 1...500)
    static let statementTimeout = ConfigurationSetting<Duration>.duration(
        "statement-timeout", "HABITSYNC_STATEMENT_TIMEOUT", "Statement timeout of each request's transaction.", default: .seconds(5))
    static let drainTimeout = ConfigurationSetting<Duration>.duration(
        "drain-timeout", "HABITSYNC_DRAIN_TIMEOUT", "On SIGTERM, how long in-flight requests may take before they are cut off.", default: .seconds(25))
    static let requestRole = ConfigurationSetting<String>(
        flag: "request-role", environmentVariable: "HABITSYNC_REQUEST_ROLE",
        summary: "Database role requests run as (SET ROLE); it must not own the tables.", valueName: "role", defaultValue: "habitsync_app",
        defaultText: "habitsync_app", rule: "must be a role name", parse: { $0.isEmpty ? nil : $0 })
    static let maxBatchChanges = ConfigurationSetting<Int>.count(
        "max-batch-changes", "HABITSYNC_MAX_BATCH_CHANGES", "Most changes one push may carry (413 beyond).", default: 1000, in: 1...100_000)
    static let maxBodyBytes = ConfigurationSetting<Int>.bytes(
        "max-body-bytes", "HABITSYNC_MAX_BODY_BYTES", "Largest push body, after gzip decoding (413 beyond).", default: 8 * 1024 * 1024,
        in: 1024...1_073_741_824)
    static let maxClockSkew = ConfigurationSetting<Duration>.duration(
        "max-clock-skew", "HABITSYNC_MAX_CLOCK_SKEW", "How far ahead of the server clock updatedAt may be before it is clamped.", default: .seconds(300))
    static let decodeBudget = ConfigurationSetting<Int>.bytes(
        "decode-budget", "HABITSYNC_DECODE_BUDGET",
        "Memory for push bodies being decoded, server-wide; a push beyond it gets 503 with Retry-After.", default: 128 * 1024 * 1024,
        in: 1_048_576...68_719_476_736)
    static let poolLeaseTimeout = ConfigurationSetting<Duration>.duration(
        "pool-lease-timeout", "HABITSYNC_POOL_LEASE_TIMEOUT", "How long a request waits for a free database connection before it gets 503.",
        default: .seconds(10))
    /// Checked by `ServeCommand` rather than here: the rule's message would repeat the value (a password).
    static let requestDatabaseURL = ConfigurationSetting<String>(
        flag: "request-database-url", environmentVariable: "HABITSYNC_REQUEST_DATABASE_URL",
        summary:
            "Where requests connect, if not --database-url: a connection pooler such as PgBouncer. Migrations and the realtime listener always use --database-url (direct).",
        valueName: "url", defaultValue: "", defaultText: "--database-url", rule: "", parse: { $0 })
    static let requestPooling = ConfigurationSetting<Bool>.choice(
        "request-pooling", "HABITSYNC_REQUEST_POOLING",
        "session (a direct connection or a session pooler) or transaction (PgBouncer pool_mode=transaction: nothing is kept on the session).",
        ["session": false, "transaction": true], default: "session", valueName: "mode")
    static let routeToNodes = ConfigurationSetting<Bool>.choice(
        "route-to-nodes", "HABITSYNC_ROUTE_TO_NODES",
        "On a Citus coordinator: on (experimental: each user's pushes and pulls run on the node holding the user, reached by the name and port pg_dist_node gives) or off (every request through the coordinator).",
        ["on": true, "off": false], default: "off")
    static let preparedStatements = ConfigurationSetting<Bool>.choice(
        "prepared-statements", "HABITSYNC_PREPARED_STATEMENTS",
        "on: statements are prepared by name once per connection; off: unnamed (PgBouncer before 1.21 in transaction mode).",
        ["on": true, "off": false], default: "on")
    static let maxStreamsPerUser = ConfigurationSetting<Int>.count(
        "max-streams-per-user", "HABITSYNC_MAX_STREAMS_PER_USER", "Open event streams (GET /v1/sync/events) one user may have (429 beyond).",
        default: RealtimeLimits().streamsPerUser, in: 1...1000)
    static let maxStreams = ConfigurationSetting<Int>.count(
        "max-streams", "HABITSYNC_MAX_STREAMS", "Open event streams this server allows (429 beyond).", default: RealtimeLimits().streams, in: 1...1_000_000)
    static let streamHeartbeat = ConfigurationSetting<Duration>.duration(
        "stream-heartbeat", "HABITSYNC_STREAM_HEARTBEAT", "How often a quiet event stream gets a comment line.", default: RealtimeLimits().heartbeat)
    static let streamLifetime = ConfigurationSetting<Duration>.duration(
        "stream-lifetime", "HABITSYNC_STREAM_LIFETIME", "How long an event stream lives before the server closes it with a retry hint.",
        default: RealtimeLimits().maximumLifetime)
    static let streamIdleTimeout = ConfigurationSetting<Duration>.duration(
        "stream-idle-timeout", "HABITSYNC_STREAM_IDLE_TIMEOUT", "How long an event stream may go without an event before it is closed.",
        default: RealtimeLimits().idleLifetime)
    static let headerTimeout = ConfigurationSetting<Duration>.duration(
        "header-timeout", "HABITSYNC_HEADER_TIMEOUT", "A new connection must send a whole request head within this.",
        default: ConnectionLimits().headerTimeout)
    static let keepAliveTimeout = ConfigurationSetting<Duration>.duration(
        "keep-alive-timeout", "HABITSYNC_KEEP_ALIVE_TIMEOUT", "An idle kept-alive connection is closed after this without a new request.",
        default: ConnectionLimits().keepAliveTimeout)
    static let bodyTimeout = ConfigurationSetting<Duration>.duration(
        "body-timeout", "HABITSYNC_BODY_TIMEOUT",
        "Most time a request body may take to arrive (time the server waits for its bytes); 408 beyond.", default: ConnectionLimits().bodyTimeout)
    static let bodyMinRate = ConfigurationSetting<Int>.count(
        "body-min-rate", "HABITSYNC_BODY_MIN_RATE", "Bytes per second a request body must average after --body-rate-grace; 408 below.",
        default: ConnectionLimits().bodyMinimumBytesPerSecond, in: 1...(1 << 30), valueName: "bytes")
    static let bodyRateGrace = ConfigurationSetting<Duration>.duration(
        "body-rate-grace", "HABITSYNC_BODY_RATE_GRACE", "How long a body may arrive at any rate before --body-min-rate applies.",
        default: ConnectionLimits().bodyGrace)
    /// No default value: without one the cap is what the open-file limit leaves (`ServeCommand.fitToDescriptors`).
    static let maxConnections = ConfigurationSetting<Int?>(
        flag: "max-connections", environmentVariable: "HABITSYNC_MAX_CONNECTIONS",
        summary: "Open HTTP connections; at the cap the longest-idle one is closed for a new one.", valueName: "n", defaultValue: nil,
        defaultText: "what the open-file limit leaves beside the pool", rule: "must be a whole number from 1 to 1000000",
        parse: { Int($0).flatMap { (1...1_000_000).contains($0) ? $0 : nil } })
    static let maxExpensiveReadsPerUser = ConfigurationSetting<Int>.count(
        "max-expensive-reads-per-user", "HABITSYNC_MAX_EXPENSIVE_READS_PER_USER", "Statistics and export requests one user may run at once (429 beyond).",
        default: 2, in: 1...100)
    static let issuerKeyRefresh = ConfigurationSetting<Duration>.duration(
        "issuer-key-refresh", "HABITSYNC_ISSUER_KEY_REFRESH", "How old identity providers' keys get before they are fetched again in the background.",
        default: IdentitySettings().refreshInterval)
    static let issuerUnknownKeyRefresh = ConfigurationSetting<Duration>.duration(
        "issuer-unknown-key-refresh", "HABITSYNC_ISSUER_UNKNOWN_KEY_REFRESH", "A token with an unknown kid fetches its issuer's keys again at most this often.",
        default: IdentitySettings().unknownKeyRefreshInterval)
    static let issuerKeyMaxStaleness = ConfigurationSetting<Duration>.duration(
        "issuer-key-max-staleness", "HABITSYNC_ISSUER_KEY_MAX_STALENESS",
        "Through a provider outage, known keys keep verifying this long after their last fetch.", default: IdentitySettings().maximumStaleness)
    static let issuerFetchTimeout = ConfigurationSetting<Duration>.duration(
        "issuer-fetch-timeout", "HABITSYNC_ISSUER_FETCH_TIMEOUT", "Timeout of one fetch of a provider's keys or discovery document.",
        default: IdentitySettings().fetch.timeout, from: .milliseconds(100), to: .seconds(60))
    static let issuerPrivateAddresses = ConfigurationSetting<Bool>.choice(
        "issuer-private-addresses", "HABITSYNC_ISSUER_PRIVATE_ADDRESSES",
        "allow: key fetches may reach private, loopback and link-local addresses (an in-house provider); refuse otherwise.",
        ["allow": true, "refuse": false], default: "refuse")
    static let issuerLoopbackHTTP = ConfigurationSetting<Bool>.choice(
        "issuer-loopback-http", "HABITSYNC_ISSUER_LOOPBACK_HTTP",
        "allow: key URLs may be plain http:// to 127.0.0.1, ::1 or localhost (test key servers only).", ["allow": true, "refuse": false],
        default: "refuse")

    static let tenantLimitReplicas = ConfigurationSetting<Int>.count(
        "tenant-limit-replicas", "HABITSYNC_TENANT_LIMIT_REPLICAS",
        "How many replicas serve together: each enforces this part of every tenant's limits a second and of its streams.",
        default: TenantQuotas.Settings().replicas, in: 1...10_000)
    static let tenantLimitsCache = ConfigurationSetting<Duration>.duration(
        "tenant-limits-cache", "HABITSYNC_TENANT_LIMITS_CACHE", "How long a tenant's limits are used before they are read again.",
        default: TenantQuotas.Settings().cacheLifetime, from: .zero, to: .seconds(3600))
    static let tenantStorageRefresh = ConfigurationSetting<Duration>.duration(
        "tenant-storage-refresh", "HABITSYNC_TENANT_STORAGE_REFRESH", "How often a tenant with a storage limit has its stored rows counted again.",
        default: TenantQuotas.Settings().storageRefresh, from: .seconds(1), to: .seconds(86_400))

    static let meterFlush = ConfigurationSetting<Duration>.duration(
        "meter-flush", "HABITSYNC_METER_FLUSH", "How often this replica adds each tenant's usage it counted to tenant_usage (and the daily records limit learns the others').",
        default: ServerConfiguration.defaultMeterFlushInterval, from: .seconds(1), to: .seconds(3600))

    static let metricsTenants = ConfigurationSetting<Int>.count(
        "metrics-tenants", "HABITSYNC_METRICS_TENANTS", "How many tenants get a tenant label of their own on /metrics (the others are counted as other).",
        default: TenantMetricLabels().limit, in: 0...10_000)

    static let traceUserIDs = ConfigurationSetting<Bool>.choice(
        "trace-user-ids", "HABITSYNC_TRACE_USER_IDS",
        "record: traces name the user (enduser.id) as well as the tenant; omit: they name the tenant only.", ["record": true, "omit": false],
        default: "omit")

    static let webhookTimeout = ConfigurationSetting<Duration>.duration(
        "webhook-timeout", "HABITSYNC_WEBHOOK_TIMEOUT", "Timeout of one webhook delivery (connecting, sending, the answer).",
        default: WebhookSettings().fetch.timeout, from: .milliseconds(100), to: .seconds(60))
    static let webhookRetryBase = ConfigurationSetting<Duration>.duration(
        "webhook-retry-base", "HABITSYNC_WEBHOOK_RETRY_BASE", "The wait after a webhook delivery's first failure; it doubles with each failure, up to an hour.",
        default: WebhookSettings().schedule.base, from: .milliseconds(10), to: .seconds(3600))
    static let webhookRetention = ConfigurationSetting<Duration>.duration(
        "webhook-retention", "HABITSYNC_WEBHOOK_RETENTION", "How long finished webhook deliveries are kept, and the longest one stays pending before it is dead.",
        default: WebhookSettings().retention, from: .seconds(60), to: .seconds(90 * 86_400))
    static let webhookPrivateAddresses = ConfigurationSetting<Bool>.choice(
        "webhook-private-addresses", "HABITSYNC_WEBHOOK_PRIVATE_ADDRESSES",
        "allow: webhook deliveries may reach private, loopback and link-local addresses (a receiver inside your network); refuse otherwise.",
        ["allow": true, "refuse": false], default: "refuse")
    static let webhookLoopbackHTTP = ConfigurationSetting<Bool>.choice(
        "webhook-loopback-http", "HABITSYNC_WEBHOOK_LOOPBACK_HTTP",
        "allow: webhook URLs may be plain http:// to 127.0.0.1, ::1 or localhost (test receivers only).", ["allow": true, "refuse": false],
        default: "refuse")

    /// Every setting as the README shows it (`ConfigurationSettingTests`).
    static let all: [ConfigurationSettingRow] = [
        host.row, port.row, migrate.row, poolSize.row, statementTimeout.row, drainTimeout.row, requestRole.row, maxBatchChanges.row,
        maxBodyBytes.row, maxClockSkew.row, decodeBudget.row, poolLeaseTimeout.row, requestDatabaseURL.row, requestPooling.row,
        routeToNodes.row, preparedStatements.row, maxStreamsPerUser.row, maxStreams.row, streamHeartbeat.row, streamLifetime.row,
        streamIdleTimeout.row, headerTimeout.row, keepAliveTimeout.row, bodyTimeout.row, bodyMinRate.row, bodyRateGrace.row,
        maxConnections.row, maxExpensiveReadsPerUser.row, issuerKeyRefresh.row, issuerUnknownKeyRefresh.row, issuerKeyMaxStaleness.row,
        issuerFetchTimeout.row, issuerPrivateAddresses.row, issuerLoopbackHTTP.row, tenantLimitReplicas.row, tenantLimitsCache.row,
        tenantStorageRefresh.row, meterFlush.row, metricsTenants.row, traceUserIDs.row, webhookTimeout.row, webhookRetryBase.row,
        webhookRetention.row, webhookPrivateAddresses.row, webhookLoopbackHTTP.row,
    ]
}
