import HabitSyncStore
import Hummingbird
import LibPQClient
import Logging
import NIOCore
import ServiceLifecycle

/// Builds the HTTP application. `serve` and the tests both call this, so the tests exercise
/// exactly what runs in production.
///
/// - Parameters:
///   - pool: the request pool (connections `SET ROLE habitsync_app`, which cannot bypass RLS).
///   - binaryHeadVersion: the highest migration this binary ships; `/readyz` wants the
///     database at or past it.
///   - listenerConnection: where the realtime listener connects (`LISTEN` needs a session of
///     its own: a direct connection, never a transaction pooler); nil: the pool's.
///   - userPools: where each user's transactions run (on Citus, the node holding the user);
///     nil: `pool`.
///   - onServerRunning: called with the bound port once the server listens.
public func buildApplication(
    configuration: ServerConfiguration,
    pool: PGPool,
    readiness: Readiness,
    metrics: ServerMetrics? = nil,
    binaryHeadVersion: Int,
    logger: Logger,
    listenerConnection: PGConnectionConfiguration? = nil,
    userPools: UserPools? = nil,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let metrics = metrics ?? ServerMetrics(tenantLabels: TenantMetricLabels(limit: configuration.metricsTenants))
    let router = Router(context: HabitSyncRequestContext.self)
    let routeMethods = RouteMethods()
    router.add(middleware: RequestObservationMiddleware(metrics: metrics, routes: routeMethods))
    // Only when traced: with tracing off a request costs nothing more than before.
    if configuration.tracing { router.add(middleware: RequestTracingMiddleware(routes: routeMethods)) }
    HealthController(pool: pool, readiness: readiness, metrics: metrics, binaryHeadVersion: binaryHeadVersion)
        .addRoutes(to: router)
    OpenAPIDocument.addRoute(to: router)
    // The sync API: every route below requires a verified token.
    let authenticator = Authenticator(
        tenants: TenantStore(pool: pool), issuers: IssuerStore(pool: pool),
        issuerKeys: IssuerKeyCache(settings: configuration.identity, logger: logger, metrics: metrics))
    let v1 = router.group("v1").add(middleware: AuthenticationMiddleware(authenticator: authenticator, traceUserIDs: configuration.traceUserIDs))
        .group(context: AuthenticatedRequestContext.self)
    // Read once, shared by every push; read as soon as the server listens (not before: a start
    // that fails to bind must not leave a query running) so that the first pushes seldom wait.
    let timeZones = TimeZoneCatalog()
    let serving = ServingGate()
    let pools = userPools ?? UserPools(single: pool)
    let meter = TenantMeter(
        store: TenantUsageStore(pool: pool), flushInterval: configuration.meterFlushInterval, storedRowsInterval: configuration.meterStoredRowsInterval,
        logger: logger)
    let quotas = TenantQuotas(store: TenantLimitsStore(pool: pool), meter: meter, settings: configuration.tenantQuotas)
    let push = PushStore(
        pool: pool, statementTimeout: configuration.statementTimeout, maximumSkew: configuration.limits.maximumClockSkewSeconds,
        timeZones: timeZones, pools: pools)
    SyncController(
        push: push,
        pull: PullStore(pool: pool, statementTimeout: configuration.statementTimeout, pools: pools),
        limits: configuration.limits, metrics: metrics, bodyBudget: RequestBodyBudget(capacityBytes: configuration.bodyBudgetBytes), quotas: quotas,
        meter: meter
    ).addRoutes(to: v1)
    // Statistics and exports hold a connection while they compute: a few per user at once.
    let expensiveReads = ExpensiveReadLimiter(perUser: configuration.expensiveReadsPerUser, metrics: metrics)
    StatsController(stats: StatsStore(pool: pool, statementTimeout: configuration.statementTimeout), limiter: expensiveReads).addRoutes(to: v1)
    AccountController(accounts: AccountStore(pool: pool, statementTimeout: configuration.statementTimeout), metrics: metrics, limiter: expensiveReads).addRoutes(to: v1)
    DevicesController(tokens: PushTokenStore(pool: pool, statementTimeout: configuration.statementTimeout)).addRoutes(to: v1)
    // Realtime: one LISTEN connection for the whole server, feeding every open stream.
    let streams = ChangeStreams(limits: configuration.realtime)
    let listening = listenerConnection ?? pool.configuration.connection
    let feed = ChangeFeed(
        listener: PGListener(configuration: listening, channel: ChangeNotice.channel),
        nodeListeners: userPools.map { NodeListeners(pools: $0, configuration: listening, channel: ChangeNotice.channel) },
        streams: streams, metrics: metrics, logger: logger, serving: serving)
    EventsController(
        streams: streams, pull: PullStore(pool: pool, statementTimeout: configuration.statementTimeout, pools: pools), metrics: metrics, quotas: quotas
    ).addRoutes(to: v1)
    routeMethods.record(router.routes.map { ("\($0.path)", $0.method.rawValue) })
    // Every connection gets a guard against slow clients; the registry caps how many are open.
    let connections = ConnectionRegistry(maximum: configuration.connections.maximumConnections, metrics: metrics)
    let connectionLimits = configuration.connections
    var services: [any Service] = [feed, meter]
    // Webhooks and wakes are written and sent on one database, not yet on Citus (deploy/README.md).
    if configuration.webhooks.enabled, push.singleNode {
        services.append(
            WebhookDeliverer(
                queue: WebhookQueue(pool: pool, schedule: configuration.webhooks.schedule), settings: configuration.webhooks, metrics: metrics, logger: logger))
    }
    if configuration.wakes.enabled, push.singleNode {
        services.append(PushWaker(queue: WakeQueue(pool: pool), settings: configuration.wakes, metrics: metrics, logger: logger))
    }
    return Application(
        router: router,
        server: .http1(configuration: .init(additionalChannelHandlers: [SlowClientGuard(limits: connectionLimits, registry: connections, metrics: metrics)])),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: configuration.serverName),
        // The meter after the server: its last flush follows the last request.
        services: services,
        onServerRunning: { channel in
            readiness.runBeforeServerShutdown { await ListenerQuiescing.stopAccepting(channel, loops: ListenerQuiescing.servingLoops) }
            serving.open()
            Task { _ = try? await timeZones.names(pool) }
            await onServerRunning(channel.localAddress?.port ?? configuration.port)
        },
        logger: logger
    )
}
