import ArgumentParser
import Foundation
import GuardedFetch
import HabitSyncServer
import HabitSyncStore
import LibPQClient
import Logging
import Migrations
import NIOCore
import ServiceLifecycle
import UnixSignals

/// `habitsync-server serve`: migrate (per --migrate), then serve HTTP until SIGTERM/SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Apply pending migrations (per --migrate) and serve the sync API until SIGTERM or SIGINT.")

    enum MigrateMode: String, ExpressibleByArgument, CaseIterable {
        case auto, check, off
    }

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Address to listen on. Env: HABITSYNC_HOST. Default: 127.0.0.1.", valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("Port to listen on (0 picks a free one). Env: HABITSYNC_PORT. Default: 8080.", valueName: "port"))
    var port: String?

    @Option(
        help: ArgumentHelp(
            "auto applies pending migrations first; check refuses to start while any are pending; off skips both. Env: HABITSYNC_MIGRATE. Default: auto.",
            valueName: "mode"))
    var migrate: String?

    @Option(name: .customLong("pool-size"), help: ArgumentHelp("Database connections for requests. Env: HABITSYNC_POOL_SIZE. Default: 10.", valueName: "n"))
    var poolSize: String?

    @Option(
        name: .customLong("statement-timeout"),
        help: ArgumentHelp(
            "Statement timeout of each request's transaction. Env: HABITSYNC_STATEMENT_TIMEOUT. Default: 5s.", valueName: "duration"))
    var statementTimeout: String?

    @Option(
        name: .customLong("drain-timeout"),
        help: ArgumentHelp(
            "On SIGTERM, how long in-flight requests may take before they are cut off. Env: HABITSYNC_DRAIN_TIMEOUT. Default: 25s.",
            valueName: "duration"))
    var drainTimeout: String?

    @Option(
        name: .customLong("request-role"),
        help: ArgumentHelp(
            "Database role requests run as (SET ROLE); it must not own the tables. Env: HABITSYNC_REQUEST_ROLE. Default: habitsync_app.",
            valueName: "role"))
    var requestRole: String?

    @Option(name: .customLong("max-batch-changes"), help: ArgumentHelp("Most changes one push may carry (413 beyond). Env: HABITSYNC_MAX_BATCH_CHANGES. Default: 1000.", valueName: "n"))
    var maxBatchChanges: String?

    @Option(
        name: .customLong("max-body-bytes"), help: ArgumentHelp("Largest push body, after gzip decoding (413 beyond). Env: HABITSYNC_MAX_BODY_BYTES. Default: 8388608 (8 MiB).", valueName: "bytes"))
    var maxBodyBytes: String?

    @Option(
        name: .customLong("max-clock-skew"),
        help: ArgumentHelp("How far ahead of the server clock updatedAt may be before it is clamped. Env: HABITSYNC_MAX_CLOCK_SKEW. Default: 5m.", valueName: "duration"))
    var maxClockSkew: String?

    @Option(
        name: .customLong("decode-budget"),
        help: ArgumentHelp(
            "Memory for push bodies being decoded, server-wide; a push beyond it gets 503 with Retry-After. Env: HABITSYNC_DECODE_BUDGET. Default: 134217728 (128 MiB).",
            valueName: "bytes"))
    var decodeBudget: String?

    @Option(
        name: .customLong("pool-lease-timeout"),
        help: ArgumentHelp(
            "How long a request waits for a free database connection before it gets 503. Env: HABITSYNC_POOL_LEASE_TIMEOUT. Default: 10s.", valueName: "duration"))
    var poolLeaseTimeout: String?

    @Option(
        name: .customLong("request-database-url"),
        help: ArgumentHelp(
            "Where requests connect, if not --database-url: a connection pooler such as PgBouncer. Migrations and the realtime listener always use --database-url (direct). Env: HABITSYNC_REQUEST_DATABASE_URL.",
            valueName: "url"))
    var requestDatabaseURL: String?

    @Option(
        name: .customLong("request-pooling"),
        help: ArgumentHelp(
            "session (a direct connection or a session pooler) or transaction (PgBouncer pool_mode=transaction: nothing is kept on the session). Env: HABITSYNC_REQUEST_POOLING. Default: session.",
            valueName: "mode"))
    var requestPooling: String?

    @Option(
        name: .customLong("route-to-nodes"),
        help: ArgumentHelp(
            "On a Citus coordinator: on (experimental: each user's pushes and pulls run on the node holding the user, reached by the name and port pg_dist_node gives) or off (every request through the coordinator). Env: HABITSYNC_ROUTE_TO_NODES. Default: off.",
            valueName: "on|off"))
    var routeToNodes: String?

    @Option(
        name: .customLong("prepared-statements"),
        help: ArgumentHelp(
            "on: statements are prepared by name once per connection; off: unnamed (PgBouncer before 1.21 in transaction mode). Env: HABITSYNC_PREPARED_STATEMENTS. Default: on.",
            valueName: "on|off"))
    var preparedStatements: String?

    @Option(
        name: .customLong("max-streams-per-user"),
        help: ArgumentHelp(
            "Open event streams (GET /v1/sync/events) one user may have (429 beyond). Env: HABITSYNC_MAX_STREAMS_PER_USER. Default: 10.", valueName: "n"))
    var maxStreamsPerUser: String?

    @Option(
        name: .customLong("max-streams"),
        help: ArgumentHelp(
            "Open event streams this server allows (429 beyond). Env: HABITSYNC_MAX_STREAMS. Default: 5000.", valueName: "n"))
    var maxStreams: String?

    @Option(
        name: .customLong("stream-heartbeat"),
        help: ArgumentHelp(
            "How often a quiet event stream gets a comment line. Env: HABITSYNC_STREAM_HEARTBEAT. Default: 15s.", valueName: "duration"))
    var streamHeartbeat: String?

    @Option(
        name: .customLong("stream-lifetime"),
        help: ArgumentHelp(
            "How long an event stream lives before the server closes it with a retry hint. Env: HABITSYNC_STREAM_LIFETIME. Default: 1h.", valueName: "duration"))
    var streamLifetime: String?

    @Option(
        name: .customLong("stream-idle-timeout"),
        help: ArgumentHelp(
            "How long an event stream may go without an event before it is closed. Env: HABITSYNC_STREAM_IDLE_TIMEOUT. Default: 15m.", valueName: "duration"))
    var streamIdleTimeout: String?

    @Option(
        name: .customLong("header-timeout"),
        help: ArgumentHelp(
            "A new connection must send a whole request head within this. Env: HABITSYNC_HEADER_TIMEOUT. Default: 10s.", valueName: "duration"))
    var headerTimeout: String?

    @Option(
        name: .customLong("keep-alive-timeout"),
        help: ArgumentHelp(
            "An idle kept-alive connection is closed after this without a new request. Env: HABITSYNC_KEEP_ALIVE_TIMEOUT. Default: 60s.", valueName: "duration"))
    var keepAliveTimeout: String?

    @Option(
        name: .customLong("body-timeout"),
        help: ArgumentHelp(
            "Most time a request body may take to arrive (time the server waits for its bytes); 408 beyond. Env: HABITSYNC_BODY_TIMEOUT. Default: 60s.",
            valueName: "duration"))
    var bodyTimeout: String?

    @Option(
        name: .customLong("body-min-rate"),
        help: ArgumentHelp(
            "Bytes per second a request body must average after --body-rate-grace; 408 below. Env: HABITSYNC_BODY_MIN_RATE. Default: 8192.", valueName: "bytes"))
    var bodyMinRate: String?

    @Option(
        name: .customLong("body-rate-grace"),
        help: ArgumentHelp(
            "How long a body may arrive at any rate before --body-min-rate applies. Env: HABITSYNC_BODY_RATE_GRACE. Default: 10s.", valueName: "duration"))
    var bodyRateGrace: String?

    @Option(
        name: .customLong("max-connections"),
        help: ArgumentHelp(
            "Open HTTP connections; at the cap the longest-idle one is closed for a new one. Env: HABITSYNC_MAX_CONNECTIONS. Default: what the open-file limit leaves beside the pool.",
            valueName: "n"))
    var maxConnections: String?

    @Option(
        name: .customLong("max-expensive-reads-per-user"),
        help: ArgumentHelp(
            "Statistics and export requests one user may run at once (429 beyond). Env: HABITSYNC_MAX_EXPENSIVE_READS_PER_USER. Default: 2.", valueName: "n"))
    var maxExpensiveReadsPerUser: String?

    @Option(
        name: .customLong("issuer-key-refresh"),
        help: ArgumentHelp(
            "How old identity providers' keys get before they are fetched again in the background. Env: HABITSYNC_ISSUER_KEY_REFRESH. Default: 5m.", valueName: "duration"))
    var issuerKeyRefresh: String?

    @Option(
        name: .customLong("issuer-unknown-key-refresh"),
        help: ArgumentHelp(
            "A token with an unknown kid fetches its issuer's keys again at most this often. Env: HABITSYNC_ISSUER_UNKNOWN_KEY_REFRESH. Default: 1m.", valueName: "duration"))
    var issuerUnknownKeyRefresh: String?

    @Option(
        name: .customLong("issuer-key-max-staleness"),
        help: ArgumentHelp(
            "Through a provider outage, known keys keep verifying this long after their last fetch. Env: HABITSYNC_ISSUER_KEY_MAX_STALENESS. Default: 24h.", valueName: "duration"))
    var issuerKeyMaxStaleness: String?

    @Option(
        name: .customLong("issuer-fetch-timeout"),
        help: ArgumentHelp(
            "Timeout of one fetch of a provider's keys or discovery document. Env: HABITSYNC_ISSUER_FETCH_TIMEOUT. Default: 5s.", valueName: "duration"))
    var issuerFetchTimeout: String?

    @Option(
        name: .customLong("issuer-private-addresses"),
        help: ArgumentHelp(
            "allow: key fetches may reach private, loopback and link-local addresses (an in-house provider); refuse otherwise. Env: HABITSYNC_ISSUER_PRIVATE_ADDRESSES. Default: refuse.",
            valueName: "allow|refuse"))
    var issuerPrivateAddresses: String?

    @Option(
        name: .customLong("issuer-loopback-http"),
        help: ArgumentHelp(
            "allow: key URLs may be plain http:// to 127.0.0.1, ::1 or localhost (test key servers only). Env: HABITSYNC_ISSUER_LOOPBACK_HTTP. Default: refuse.", valueName: "allow|refuse"))
    var issuerLoopbackHTTP: String?

    struct Settings {
        var server: ServerConfiguration
        var migrate: MigrateMode
        var poolSize: Int
        var poolLeaseTimeout: Duration
        var drainTimeout: Duration
        var requestRole: String
        var requestDatabaseURL: String?
        var transactionPooling: Bool
        var namedPreparedStatements: Bool
        var routeToNodes: Bool
        var configuredMaximumConnections: Int?
    }

    /// Every setting resolved and checked before anything starts.
    func resolveSettings() throws -> Settings {
        let host = try ConfigurationValue.resolve(
            flag: host, flagName: "host", environmentVariable: "HABITSYNC_HOST", default: "127.0.0.1",
            rule: "must be a host name or IP address", parse: { $0.isEmpty || $0.contains(" ") ? nil : $0 })
        let port = try ConfigurationValue.resolve(
            flag: port, flagName: "port", environmentVariable: "HABITSYNC_PORT", default: 8080,
            rule: "must be a port number from 0 to 65535", parse: ConfigurationValue.port)
        let migrate = try ConfigurationValue.resolve(
            flag: migrate, flagName: "migrate", environmentVariable: "HABITSYNC_MIGRATE", default: MigrateMode.auto,
            rule: "must be auto, check or off", parse: { MigrateMode(rawValue: $0) })
        let poolSize = try ConfigurationValue.resolve(
            flag: poolSize, flagName: "pool-size", environmentVariable: "HABITSYNC_POOL_SIZE", default: 10,
            rule: "must be a whole number from 1 to 500", parse: { ConfigurationValue.positiveInt($0).flatMap { $0 <= 500 ? $0 : nil } })
        let statementTimeout = try ConfigurationValue.resolve(
            flag: statementTimeout, flagName: "statement-timeout", environmentVariable: "HABITSYNC_STATEMENT_TIMEOUT",
            default: Duration.seconds(5), rule: "must be a positive duration such as 5s or 500ms", parse: ConfigurationValue.duration)
        let drainTimeout = try ConfigurationValue.resolve(
            flag: drainTimeout, flagName: "drain-timeout", environmentVariable: "HABITSYNC_DRAIN_TIMEOUT",
            default: Duration.seconds(25), rule: "must be a positive duration such as 25s", parse: ConfigurationValue.duration)
        let requestRole = try ConfigurationValue.resolve(
            flag: requestRole, flagName: "request-role", environmentVariable: "HABITSYNC_REQUEST_ROLE", default: "habitsync_app",
            rule: "must be a role name", parse: { $0.isEmpty ? nil : $0 })
        let maxChanges = try ConfigurationValue.resolve(
            flag: maxBatchChanges, flagName: "max-batch-changes", environmentVariable: "HABITSYNC_MAX_BATCH_CHANGES", default: 1000,
            rule: "must be a whole number from 1 to 100000", parse: { ConfigurationValue.positiveInt($0).flatMap { $0 <= 100_000 ? $0 : nil } })
        let maxBytes = try ConfigurationValue.resolve(
            flag: maxBodyBytes, flagName: "max-body-bytes", environmentVariable: "HABITSYNC_MAX_BODY_BYTES", default: 8 * 1024 * 1024,
            rule: "must be a whole number of bytes from 1024 to 1073741824", parse: { Int($0).flatMap { (1024...1_073_741_824).contains($0) ? $0 : nil } })
        let skew = try ConfigurationValue.resolve(
            flag: maxClockSkew, flagName: "max-clock-skew", environmentVariable: "HABITSYNC_MAX_CLOCK_SKEW", default: Duration.seconds(300),
            rule: "must be a positive duration such as 5m", parse: ConfigurationValue.duration)
        let budget = try ConfigurationValue.resolve(
            flag: decodeBudget, flagName: "decode-budget", environmentVariable: "HABITSYNC_DECODE_BUDGET", default: 128 * 1024 * 1024,
            rule: "must be a whole number of bytes from 1048576 to 68719476736", parse: { Int($0).flatMap { (1_048_576...68_719_476_736).contains($0) ? $0 : nil } })
        let leaseTimeout = try ConfigurationValue.resolve(
            flag: poolLeaseTimeout, flagName: "pool-lease-timeout", environmentVariable: "HABITSYNC_POOL_LEASE_TIMEOUT",
            default: Duration.seconds(10), rule: "must be a positive duration such as 10s", parse: ConfigurationValue.duration)
        let limits = SyncLimits(
            maximumChanges: maxChanges, maximumBodyBytes: maxBytes,
            maximumClockSkewSeconds: skew / .seconds(1))
        var realtime = RealtimeLimits()
        realtime.streamsPerUser = try ConfigurationValue.resolve(
            flag: maxStreamsPerUser, flagName: "max-streams-per-user", environmentVariable: "HABITSYNC_MAX_STREAMS_PER_USER", default: realtime.streamsPerUser,
            rule: "must be a whole number from 1 to 1000", parse: { ConfigurationValue.positiveInt($0).flatMap { $0 <= 1000 ? $0 : nil } })
        realtime.streams = try ConfigurationValue.resolve(
            flag: maxStreams, flagName: "max-streams", environmentVariable: "HABITSYNC_MAX_STREAMS", default: realtime.streams,
            rule: "must be a whole number from 1 to 1000000", parse: { ConfigurationValue.positiveInt($0).flatMap { $0 <= 1_000_000 ? $0 : nil } })
        realtime.heartbeat = try ConfigurationValue.resolve(
            flag: streamHeartbeat, flagName: "stream-heartbeat", environmentVariable: "HABITSYNC_STREAM_HEARTBEAT", default: realtime.heartbeat,
            rule: "must be a positive duration such as 15s", parse: ConfigurationValue.duration)
        realtime.maximumLifetime = try ConfigurationValue.resolve(
            flag: streamLifetime, flagName: "stream-lifetime", environmentVariable: "HABITSYNC_STREAM_LIFETIME", default: realtime.maximumLifetime,
            rule: "must be a positive duration such as 1h", parse: ConfigurationValue.duration)
        realtime.idleLifetime = try ConfigurationValue.resolve(
            flag: streamIdleTimeout, flagName: "stream-idle-timeout", environmentVariable: "HABITSYNC_STREAM_IDLE_TIMEOUT", default: realtime.idleLifetime,
            rule: "must be a positive duration such as 15m", parse: ConfigurationValue.duration)
        // Checked here rather than by `resolve`, whose message repeats the value (a password).
        let requestURL = try ConfigurationValue.resolve(
            flag: requestDatabaseURL, flagName: "request-database-url", environmentVariable: "HABITSYNC_REQUEST_DATABASE_URL", default: "",
            rule: "", parse: { $0 })
        if !requestURL.isEmpty {
            do { try PGConnectionConfiguration.validate(requestURL) } catch {
                throw ValidationError("--request-database-url (or HABITSYNC_REQUEST_DATABASE_URL): not a libpq connection string: \(error.message)")
            }
        }
        let pooling = try ConfigurationValue.resolve(
            flag: requestPooling, flagName: "request-pooling", environmentVariable: "HABITSYNC_REQUEST_POOLING", default: false,
            rule: "must be session or transaction", parse: { ["session": false, "transaction": true][$0] })
        let prepared = try ConfigurationValue.resolve(
            flag: preparedStatements, flagName: "prepared-statements", environmentVariable: "HABITSYNC_PREPARED_STATEMENTS", default: true,
            rule: "must be on or off", parse: { ["on": true, "off": false][$0] })
        let routeToNodes = try ConfigurationValue.resolve(
            flag: routeToNodes, flagName: "route-to-nodes", environmentVariable: "HABITSYNC_ROUTE_TO_NODES", default: false,
            rule: "must be on or off", parse: { ["on": true, "off": false][$0] })
        var connections = ConnectionLimits()
        connections.headerTimeout = try ConfigurationValue.resolve(
            flag: headerTimeout, flagName: "header-timeout", environmentVariable: "HABITSYNC_HEADER_TIMEOUT", default: connections.headerTimeout,
            rule: "must be a positive duration such as 10s", parse: ConfigurationValue.duration)
        connections.keepAliveTimeout = try ConfigurationValue.resolve(
            flag: keepAliveTimeout, flagName: "keep-alive-timeout", environmentVariable: "HABITSYNC_KEEP_ALIVE_TIMEOUT", default: connections.keepAliveTimeout,
            rule: "must be a positive duration such as 60s", parse: ConfigurationValue.duration)
        connections.bodyTimeout = try ConfigurationValue.resolve(
            flag: bodyTimeout, flagName: "body-timeout", environmentVariable: "HABITSYNC_BODY_TIMEOUT", default: connections.bodyTimeout,
            rule: "must be a positive duration such as 60s", parse: ConfigurationValue.duration)
        connections.bodyMinimumBytesPerSecond = try ConfigurationValue.resolve(
            flag: bodyMinRate, flagName: "body-min-rate", environmentVariable: "HABITSYNC_BODY_MIN_RATE", default: connections.bodyMinimumBytesPerSecond,
            rule: "must be a whole number of bytes per second from 1 to 1073741824", parse: { ConfigurationValue.positiveInt($0).flatMap { $0 <= 1 << 30 ? $0 : nil } })
        connections.bodyGrace = try ConfigurationValue.resolve(
            flag: bodyRateGrace, flagName: "body-rate-grace", environmentVariable: "HABITSYNC_BODY_RATE_GRACE", default: connections.bodyGrace,
            rule: "must be a positive duration such as 10s", parse: ConfigurationValue.duration)
        let configuredConnections = try ConfigurationValue.resolve(
            flag: maxConnections, flagName: "max-connections", environmentVariable: "HABITSYNC_MAX_CONNECTIONS", default: Int?.none,
            rule: "must be a whole number from 1 to 1000000", parse: { ConfigurationValue.positiveInt($0).flatMap { $0 <= 1_000_000 ? $0 : nil } })
        let expensiveReads = try ConfigurationValue.resolve(
            flag: maxExpensiveReadsPerUser, flagName: "max-expensive-reads-per-user", environmentVariable: "HABITSYNC_MAX_EXPENSIVE_READS_PER_USER", default: 2,
            rule: "must be a whole number from 1 to 100", parse: { ConfigurationValue.positiveInt($0).flatMap { $0 <= 100 ? $0 : nil } })
        var identity = IdentitySettings()
        identity.refreshInterval = try ConfigurationValue.resolve(
            flag: issuerKeyRefresh, flagName: "issuer-key-refresh", environmentVariable: "HABITSYNC_ISSUER_KEY_REFRESH", default: identity.refreshInterval,
            rule: "must be a positive duration such as 5m", parse: ConfigurationValue.duration)
        identity.unknownKeyRefreshInterval = try ConfigurationValue.resolve(
            flag: issuerUnknownKeyRefresh, flagName: "issuer-unknown-key-refresh", environmentVariable: "HABITSYNC_ISSUER_UNKNOWN_KEY_REFRESH",
            default: identity.unknownKeyRefreshInterval, rule: "must be a positive duration such as 1m", parse: ConfigurationValue.duration)
        identity.maximumStaleness = try ConfigurationValue.resolve(
            flag: issuerKeyMaxStaleness, flagName: "issuer-key-max-staleness", environmentVariable: "HABITSYNC_ISSUER_KEY_MAX_STALENESS",
            default: identity.maximumStaleness, rule: "must be a positive duration such as 24h", parse: ConfigurationValue.duration)
        identity.fetch.timeout = try ConfigurationValue.resolve(
            flag: issuerFetchTimeout, flagName: "issuer-fetch-timeout", environmentVariable: "HABITSYNC_ISSUER_FETCH_TIMEOUT", default: identity.fetch.timeout,
            rule: "must be a duration from 100ms to 60s", parse: { ConfigurationValue.duration($0).flatMap { (.milliseconds(100) ... .seconds(60)).contains($0) ? $0 : nil } })
        identity.fetch.allowPrivateAddresses = try ConfigurationValue.resolve(
            flag: issuerPrivateAddresses, flagName: "issuer-private-addresses", environmentVariable: "HABITSYNC_ISSUER_PRIVATE_ADDRESSES", default: false,
            rule: "must be allow or refuse", parse: { ["allow": true, "refuse": false][$0] })
        identity.fetch.allowLoopbackHTTP = try ConfigurationValue.resolve(
            flag: issuerLoopbackHTTP, flagName: "issuer-loopback-http", environmentVariable: "HABITSYNC_ISSUER_LOOPBACK_HTTP", default: false,
            rule: "must be allow or refuse", parse: { ["allow": true, "refuse": false][$0] })
        var server = ServerConfiguration(host: host, port: port, statementTimeout: statementTimeout, limits: limits, bodyBudgetBytes: budget)
        server.identity = identity
        server.realtime = realtime
        server.connections = connections
        server.expensiveReadsPerUser = expensiveReads
        return Settings(
            server: server,
            migrate: migrate, poolSize: poolSize, poolLeaseTimeout: leaseTimeout, drainTimeout: drainTimeout, requestRole: requestRole,
            requestDatabaseURL: requestURL.isEmpty ? nil : requestURL, transactionPooling: pooling, namedPreparedStatements: prepared,
            routeToNodes: routeToNodes, configuredMaximumConnections: configuredConnections)
    }

    /// Raises the open-file limit and sets the connection cap from it (unless configured);
    /// warns when what is configured cannot fit, since the kernel would refuse it later.
    static func fitToDescriptors(_ settings: inout Settings, logger: Logger) {
        let limit = DescriptorLimit.raiseSoftLimit()
        if let raisedFrom = limit.raisedFrom {
            logger.info("raised the open-file limit", metadata: ["from": "\(raisedFrom)", "to": "\(limit.soft)"])
        }
        let fit = DescriptorLimit.connectionsThatFit(soft: limit.soft, poolSize: settings.poolSize)
        let cap = settings.configuredMaximumConnections ?? min(fit, 1_000_000)
        settings.server.connections.maximumConnections = cap
        if cap > fit {
            logger.warning(
                "--max-connections does not fit the open-file limit; raise LimitNOFILE (systemd) or ulimit -n",
                metadata: [
                    "max_connections": "\(cap)", "open_file_limit": "\(limit.soft)", "fits": "\(fit)",
                ])
        }
        if settings.server.realtime.streams > min(cap, fit) {
            logger.warning(
                "--max-streams cannot be reached: every stream is a connection, and the open-file limit allows fewer; raise LimitNOFILE (systemd) or ulimit -n",
                metadata: [
                    "max_streams": "\(settings.server.realtime.streams)", "open_file_limit": "\(limit.soft)", "connections": "\(min(cap, fit))",
                ])
        }
        let needed = RequestBodyBudget.estimate(bodyBytes: settings.server.limits.maximumBodyBytes)
        if needed > settings.server.bodyBudgetBytes {
            logger.warning(
                "--decode-budget is smaller than one push of --max-body-bytes needs; pushes that large get 413",
                metadata: [
                    "decode_budget": "\(settings.server.bodyBudgetBytes)", "needed": "\(needed)",
                ])
        }
    }

    func run() async throws {
        var fitted = try resolveSettings()
        let logger = try common.makeLogger()
        // Every connection's notices go to the log, rate-limited, not raw to stderr.
        let notices = DatabaseNoticeLog(logger: logger).sink
        Self.fitToDescriptors(&fitted, logger: logger)
        let settings = fitted
        let directory = try common.migrationDirectory()
        let migrationOptions = try common.migrationOptions()
        let database = try common.openDatabase(logger: logger, creating: true)
        defer { database.close() }

        do {
            try await Self.prepareSchema(
                mode: settings.migrate, connectionString: database.connectionString, directory: directory, options: migrationOptions,
                notices: notices, logger: logger)
        } catch {
            throw CLIFailure(message: "\(error)")
        }

        let distributed: Bool
        do {
            distributed = try await Self.isCitus(connectionString: database.connectionString, notices: notices, logger: logger)
        } catch {
            throw CLIFailure(message: "\(error)")
        }
        if distributed { logger.info("the database is a Citus coordinator; requests use its settings") }

        let pool = PGPool(
            configuration: .init(
                connection: ServerConfiguration.requestConnection(
                    connectionString: settings.requestDatabaseURL ?? database.connectionString, role: settings.requestRole,
                    transactionPooling: settings.transactionPooling, namedPreparedStatements: settings.namedPreparedStatements,
                    distributed: distributed, notices: notices),
                maximumConnections: settings.poolSize, leaseTimeout: settings.poolLeaseTimeout),
            logger: logger)
        // On Citus with --route-to-nodes on, each user's pushes and pulls run on the node holding
        // the user (deploy/README.md), reached as the coordinator's catalog names it. Not
        // through a pooler: a request URL of its own names where requests go.
        let userPools = distributed && settings.routeToNodes && settings.requestDatabaseURL == nil ? UserPools(citusCoordinator: pool, logger: logger) : nil
        let readiness = Readiness()
        let app = buildApplication(
            configuration: settings.server, pool: pool, readiness: readiness, binaryHeadVersion: directory.headVersion, logger: logger,
            listenerConnection: PGConnectionConfiguration(connectionString: database.connectionString, notices: notices), userPools: userPools,
            onServerRunning: { port in logger.info("serving", metadata: ["host": "\(settings.server.host)", "port": "\(port)"]) })
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: pool), .init(service: app), .init(service: readiness)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
            .withGracefulShutdownTimeout(settings.drainTimeout))
        do {
            try await group.run()
        } catch {
            // Every service has ended (the change listener's thread too); the pool's threads
            // are stopped before the process exits, so no libpq call is left running.
            await userPools?.close()
            pool.close()
            await pool.shutdownThreads()
            throw CLIFailure(message: Self.startFailure(error, settings: settings))
        }
        await userPools?.close()
        pool.close()
        await pool.shutdownThreads()
        logger.info("stopped")
    }

    /// What a failed start says: the port and the way out, not NIO's description.
    static func startFailure(_ error: any Error, settings: Settings) -> String {
        let port = settings.server.port
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE:
            return "port \(port) is in use (another habitsync-server?); choose one with --port or HABITSYNC_PORT"
        case EACCES:
            return "not allowed to listen on port \(port) (ports below 1024 need privileges); choose one with --port or HABITSYNC_PORT"
        case EADDRNOTAVAIL:
            return "cannot listen on \(settings.server.host): no such address on this machine; choose one with --host or HABITSYNC_HOST"
        default:
            return "the server stopped: \(error)"
        }
    }

    /// Whether the database has the citus extension, asked on a connection of the login role.
    static func isCitus(connectionString: String, notices: PGNoticeSink = .discard, logger: Logger) async throws -> Bool {
        let configuration = PGPool.Configuration(
            connection: PGConnectionConfiguration(connectionString: connectionString, applicationName: "habitsync-server serve", notices: notices),
            maximumConnections: 1)
        return try await PGPool.withPool(configuration, logger: logger) { try await DistributionStore(pool: $0).isCitus() }
    }

    /// Applies or checks migrations on a connection of the login role (the tables' owner).
    static func prepareSchema(
        mode: MigrateMode, connectionString: String, directory: MigrationDirectory, options: MigrationRunner.Options,
        notices: PGNoticeSink = .discard, logger: Logger
    ) async throws {
        guard mode != .off else { return }
        let configuration = PGPool.Configuration(
            connection: PGConnectionConfiguration(connectionString: connectionString, applicationName: "habitsync-server migrate", notices: notices),
            maximumConnections: 1)
        try await PGPool.withPool(configuration, logger: logger) { pool in
            let runner = MigrationRunner(pool: pool, directory: directory, options: options, logger: logger)
            switch mode {
            case .auto:
                let result = try await runner.up()
                logger.info("schema ready", metadata: ["applied": "\(result.applied.count)", "database_version": "\(result.status.databaseVersion)"])
            case .check:
                let status = try await runner.validate()
                if status.databaseIsAhead {
                    logger.warning(
                        "the database is ahead of this binary; serving anyway (migrations are expand/contract)",
                        metadata: [
                            "database_version": "\(status.databaseVersion)", "binary_head": "\(status.headVersion)",
                        ])
                }
                if let first = status.pending.first {
                    throw MigrationError(.pending, "\(status.pending.count) migration(s) pending, starting with \(first.fileName); run `habitsync-server migrate up` first (--migrate check)")
                }
            case .off:
                break
            }
        }
    }
}

extension ServiceGroupConfiguration {
    func withGracefulShutdownTimeout(_ timeout: Duration) -> ServiceGroupConfiguration {
        var copy = self
        copy.maximumGracefulShutdownDuration = timeout
        return copy
    }
}
