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

    enum MigrateMode: String, ExpressibleByArgument, CaseIterable, Sendable {
        case auto, check, off
    }

    @OptionGroup var common: CommonOptions

    // Each flag's name, help and default come from its declaration in `ServeSettings`.
    @Option(name: ServeSettings.host.name, help: ServeSettings.host.help) var host: String?
    @Option(name: ServeSettings.port.name, help: ServeSettings.port.help) var port: String?
    @Option(name: ServeSettings.migrate.name, help: ServeSettings.migrate.help) var migrate: String?
    @Option(name: ServeSettings.poolSize.name, help: ServeSettings.poolSize.help) var poolSize: String?
    @Option(name: ServeSettings.statementTimeout.name, help: ServeSettings.statementTimeout.help) var statementTimeout: String?
    @Option(name: ServeSettings.drainTimeout.name, help: ServeSettings.drainTimeout.help) var drainTimeout: String?
    @Option(name: ServeSettings.requestRole.name, help: ServeSettings.requestRole.help) var requestRole: String?
    @Option(name: ServeSettings.maxBatchChanges.name, help: ServeSettings.maxBatchChanges.help) var maxBatchChanges: String?
    @Option(name: ServeSettings.maxBodyBytes.name, help: ServeSettings.maxBodyBytes.help) var maxBodyBytes: String?
    @Option(name: ServeSettings.maxClockSkew.name, help: ServeSettings.maxClockSkew.help) var maxClockSkew: String?
    @Option(name: ServeSettings.decodeBudget.name, help: ServeSettings.decodeBudget.help) var decodeBudget: String?
    @Option(name: ServeSettings.poolLeaseTimeout.name, help: ServeSettings.poolLeaseTimeout.help) var poolLeaseTimeout: String?
    @Option(name: ServeSettings.requestDatabaseURL.name, help: ServeSettings.requestDatabaseURL.help) var requestDatabaseURL: String?
    @Option(name: ServeSettings.requestPooling.name, help: ServeSettings.requestPooling.help) var requestPooling: String?
    @Option(name: ServeSettings.routeToNodes.name, help: ServeSettings.routeToNodes.help) var routeToNodes: String?
    @Option(name: ServeSettings.preparedStatements.name, help: ServeSettings.preparedStatements.help) var preparedStatements: String?
    @Option(name: ServeSettings.maxStreamsPerUser.name, help: ServeSettings.maxStreamsPerUser.help) var maxStreamsPerUser: String?
    @Option(name: ServeSettings.maxStreams.name, help: ServeSettings.maxStreams.help) var maxStreams: String?
    @Option(name: ServeSettings.streamHeartbeat.name, help: ServeSettings.streamHeartbeat.help) var streamHeartbeat: String?
    @Option(name: ServeSettings.streamLifetime.name, help: ServeSettings.streamLifetime.help) var streamLifetime: String?
    @Option(name: ServeSettings.streamIdleTimeout.name, help: ServeSettings.streamIdleTimeout.help) var streamIdleTimeout: String?
    @Option(name: ServeSettings.headerTimeout.name, help: ServeSettings.headerTimeout.help) var headerTimeout: String?
    @Option(name: ServeSettings.keepAliveTimeout.name, help: ServeSettings.keepAliveTimeout.help) var keepAliveTimeout: String?
    @Option(name: ServeSettings.bodyTimeout.name, help: ServeSettings.bodyTimeout.help) var bodyTimeout: String?
    @Option(name: ServeSettings.bodyMinRate.name, help: ServeSettings.bodyMinRate.help) var bodyMinRate: String?
    @Option(name: ServeSettings.bodyRateGrace.name, help: ServeSettings.bodyRateGrace.help) var bodyRateGrace: String?
    @Option(name: ServeSettings.maxConnections.name, help: ServeSettings.maxConnections.help) var maxConnections: String?
    @Option(name: ServeSettings.maxExpensiveReadsPerUser.name, help: ServeSettings.maxExpensiveReadsPerUser.help) var maxExpensiveReadsPerUser: String?
    @Option(name: ServeSettings.issuerKeyRefresh.name, help: ServeSettings.issuerKeyRefresh.help) var issuerKeyRefresh: String?
    @Option(name: ServeSettings.issuerUnknownKeyRefresh.name, help: ServeSettings.issuerUnknownKeyRefresh.help) var issuerUnknownKeyRefresh: String?
    @Option(name: ServeSettings.issuerKeyMaxStaleness.name, help: ServeSettings.issuerKeyMaxStaleness.help) var issuerKeyMaxStaleness: String?
    @Option(name: ServeSettings.issuerFetchTimeout.name, help: ServeSettings.issuerFetchTimeout.help) var issuerFetchTimeout: String?
    @Option(name: ServeSettings.issuerPrivateAddresses.name, help: ServeSettings.issuerPrivateAddresses.help) var issuerPrivateAddresses: String?
    @Option(name: ServeSettings.issuerLoopbackHTTP.name, help: ServeSettings.issuerLoopbackHTTP.help) var issuerLoopbackHTTP: String?
    @Option(name: ServeSettings.tenantLimitReplicas.name, help: ServeSettings.tenantLimitReplicas.help) var tenantLimitReplicas: String?
    @Option(name: ServeSettings.tenantLimitsCache.name, help: ServeSettings.tenantLimitsCache.help) var tenantLimitsCache: String?
    @Option(name: ServeSettings.tenantStorageRefresh.name, help: ServeSettings.tenantStorageRefresh.help) var tenantStorageRefresh: String?
    @Option(name: ServeSettings.meterFlush.name, help: ServeSettings.meterFlush.help) var meterFlush: String?
    @Option(name: ServeSettings.metricsTenants.name, help: ServeSettings.metricsTenants.help) var metricsTenants: String?
    @Option(name: ServeSettings.traceUserIDs.name, help: ServeSettings.traceUserIDs.help) var traceUserIDs: String?
    @Option(name: ServeSettings.webhookTimeout.name, help: ServeSettings.webhookTimeout.help) var webhookTimeout: String?
    @Option(name: ServeSettings.webhookRetryBase.name, help: ServeSettings.webhookRetryBase.help) var webhookRetryBase: String?
    @Option(name: ServeSettings.webhookRetention.name, help: ServeSettings.webhookRetention.help) var webhookRetention: String?
    @Option(name: ServeSettings.webhookPrivateAddresses.name, help: ServeSettings.webhookPrivateAddresses.help) var webhookPrivateAddresses: String?
    @Option(name: ServeSettings.webhookLoopbackHTTP.name, help: ServeSettings.webhookLoopbackHTTP.help) var webhookLoopbackHTTP: String?

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
        typealias S = ServeSettings
        let limits = SyncLimits(
            maximumChanges: try S.maxBatchChanges.resolve(maxBatchChanges), maximumBodyBytes: try S.maxBodyBytes.resolve(maxBodyBytes),
            maximumClockSkewSeconds: try S.maxClockSkew.resolve(maxClockSkew) / .seconds(1))
        var realtime = RealtimeLimits()
        realtime.streamsPerUser = try S.maxStreamsPerUser.resolve(maxStreamsPerUser)
        realtime.streams = try S.maxStreams.resolve(maxStreams)
        realtime.heartbeat = try S.streamHeartbeat.resolve(streamHeartbeat)
        realtime.maximumLifetime = try S.streamLifetime.resolve(streamLifetime)
        realtime.idleLifetime = try S.streamIdleTimeout.resolve(streamIdleTimeout)
        let requestURL = try S.requestDatabaseURL.resolve(requestDatabaseURL)
        if !requestURL.isEmpty {
            do { try PGConnectionConfiguration.validate(requestURL) } catch {
                throw ValidationError("--request-database-url (or HABITSYNC_REQUEST_DATABASE_URL): not a libpq connection string: \(error.message)")
            }
        }
        var connections = ConnectionLimits()
        connections.headerTimeout = try S.headerTimeout.resolve(headerTimeout)
        connections.keepAliveTimeout = try S.keepAliveTimeout.resolve(keepAliveTimeout)
        connections.bodyTimeout = try S.bodyTimeout.resolve(bodyTimeout)
        connections.bodyMinimumBytesPerSecond = try S.bodyMinRate.resolve(bodyMinRate)
        connections.bodyGrace = try S.bodyRateGrace.resolve(bodyRateGrace)
        var identity = IdentitySettings()
        identity.refreshInterval = try S.issuerKeyRefresh.resolve(issuerKeyRefresh)
        identity.unknownKeyRefreshInterval = try S.issuerUnknownKeyRefresh.resolve(issuerUnknownKeyRefresh)
        identity.maximumStaleness = try S.issuerKeyMaxStaleness.resolve(issuerKeyMaxStaleness)
        identity.fetch.timeout = try S.issuerFetchTimeout.resolve(issuerFetchTimeout)
        identity.fetch.allowPrivateAddresses = try S.issuerPrivateAddresses.resolve(issuerPrivateAddresses)
        identity.fetch.allowLoopbackHTTP = try S.issuerLoopbackHTTP.resolve(issuerLoopbackHTTP)
        var server = ServerConfiguration(
            host: try S.host.resolve(host), port: try S.port.resolve(port), statementTimeout: try S.statementTimeout.resolve(statementTimeout),
            limits: limits, bodyBudgetBytes: try S.decodeBudget.resolve(decodeBudget))
        server.identity = identity
        server.realtime = realtime
        server.connections = connections
        server.expensiveReadsPerUser = try S.maxExpensiveReadsPerUser.resolve(maxExpensiveReadsPerUser)
        server.tenantQuotas = TenantQuotas.Settings(
            cacheLifetime: try S.tenantLimitsCache.resolve(tenantLimitsCache), storageRefresh: try S.tenantStorageRefresh.resolve(tenantStorageRefresh),
            replicas: try S.tenantLimitReplicas.resolve(tenantLimitReplicas))
        server.meterFlushInterval = try S.meterFlush.resolve(meterFlush)
        server.metricsTenants = try S.metricsTenants.resolve(metricsTenants)
        server.traceUserIDs = try S.traceUserIDs.resolve(traceUserIDs)
        server.webhooks.fetch.timeout = try S.webhookTimeout.resolve(webhookTimeout)
        server.webhooks.schedule.base = try S.webhookRetryBase.resolve(webhookRetryBase)
        server.webhooks.retention = try S.webhookRetention.resolve(webhookRetention)
        server.webhooks.fetch.allowPrivateAddresses = try S.webhookPrivateAddresses.resolve(webhookPrivateAddresses)
        server.webhooks.fetch.allowLoopbackHTTP = try S.webhookLoopbackHTTP.resolve(webhookLoopbackHTTP)
        return Settings(
            server: server, migrate: try S.migrate.resolve(migrate), poolSize: try S.poolSize.resolve(poolSize),
            poolLeaseTimeout: try S.poolLeaseTimeout.resolve(poolLeaseTimeout), drainTimeout: try S.drainTimeout.resolve(drainTimeout),
            requestRole: try S.requestRole.resolve(requestRole), requestDatabaseURL: requestURL.isEmpty ? nil : requestURL,
            transactionPooling: try S.requestPooling.resolve(requestPooling), namedPreparedStatements: try S.preparedStatements.resolve(preparedStatements),
            routeToNodes: try S.routeToNodes.resolve(routeToNodes), configuredMaximumConnections: try S.maxConnections.resolve(maxConnections))
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
        // Tracing (off unless the environment's OTEL_* variables turn it on): bootstrapped once,
        // before anything makes a span; its exporter runs beside the server and sends the last
        // spans when it stops.
        var tracing: (any Service)?
        do {
            if try ServerTracing.isEnabled(environment: ProcessInfo.processInfo.environment) {
                tracing = try ServerTracing.bootstrap()
                fitted.server.tracing = true
            }
        } catch {
            throw CLIFailure(message: "tracing: \(error)")
        }
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
                // Shut down in reverse order: the exporter last, after the last request's spans.
                services: (tracing.map { [.init(service: $0)] } ?? []) + [.init(service: pool), .init(service: app), .init(service: readiness)],
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
