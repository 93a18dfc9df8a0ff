import Foundation
import HabitSyncDomain
import HabitSyncStore
import LibPQClient
import Prometheus
import Synchronization

/// The server's Prometheus metrics, in a registry of its own (not the process-global
/// MetricsSystem), so each application instance, and each test, counts for itself.
/// Labels never carry user ids; the per-tenant counters carry a tenant's id for a bounded
/// number of tenants (`TenantMetricLabels`).
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    public let tenantLabels: TenantMetricLabels
    private let reportedPoolErrors = Mutex(0)
    private let reportedDroppedLogLines = Mutex(0)

    static let latencyBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    public init(tenantLabels: TenantMetricLabels = TenantMetricLabels()) { self.tenantLabels = tenantLabels }

    /// A push a tenant's device made: taken (`changes` in it) or refused by a tenant limit.
    public func recordTenantPush(_ tenant: UUID, changes: Int, refusedBy limit: String? = nil) {
        let label = tenantLabels.label(tenant)
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_tenant_pushes", unit: "total", "Pushes per tenant (its id for the first --metrics-tenants tenants, then other) by outcome: taken or refused."),
            labels: [("tenant", label), ("outcome", limit == nil ? "taken" : "refused")]
        ).increment()
        if let limit {
            registry.makeCounter(
                descriptor: Self.descriptor("habitsync_tenant_limit_refusals", unit: "total", "Requests refused by a tenant limit, per tenant and limit."),
                labels: [("tenant", label), ("limit", limit)]
            ).increment()
        } else {
            registry.makeCounter(
                descriptor: Self.descriptor("habitsync_tenant_changes_received", unit: "total", "Changes in the pushes taken, per tenant."),
                labels: [("tenant", label)]
            ).increment(by: Int64(changes))
        }
    }

    /// A stream a tenant limit refused.
    public func recordTenantStreamRefused(_ tenant: UUID) {
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_tenant_limit_refusals", unit: "total", "Requests refused by a tenant limit, per tenant and limit."),
            labels: [("tenant", tenantLabels.label(tenant)), ("limit", "streams")]
        ).increment()
    }

    /// A pull page served to a tenant's device.
    public func recordTenantPull(_ tenant: UUID) {
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_tenant_pulls", unit: "total", "Pull pages per tenant."), labels: [("tenant", tenantLabels.label(tenant))]
        ).increment()
    }

    static func descriptor(_ name: String, unit: String = "", _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: unit, helpText: help)
    }

    public func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let labels = [("method", method), ("route", route), ("status", String(status))]
        registry.makeCounter(descriptor: Self.descriptor("http_requests", unit: "total", "HTTP requests by method, route and status."), labels: labels).increment()
        registry.makeDurationHistogram(
            descriptor: Self.descriptor("http_request_duration", unit: "seconds", "HTTP request latency by method, route and status."),
            labels: labels, buckets: Self.latencyBuckets
        ).recordNanoseconds(Int64(duration / .nanoseconds(1)))
    }

    /// An identity provider's keys fetched (or not): each replica fetches for itself.
    public func recordKeyFetch(outcome: String) {
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_issuer_key_fetches", unit: "total", "Fetches of identity providers' keys by outcome: fetched or failed."),
            labels: [("outcome", outcome)]
        ).increment()
    }

    public func recordBatch(outcome: String) {
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_push_batches", unit: "total", "Push batches by outcome: applied, replayed (idempotent retry) or conflict."),
            labels: [("outcome", outcome)]
        ).increment()
    }

    public func recordPushed(_ tally: PushStore.Tally) {
        for (collection, statuses) in tally.counts {
            for (status, count) in statuses {
                registry.makeCounter(
                    descriptor: Self.descriptor("habitsync_changes_pushed", unit: "total", "Pushed changes by collection and result status."),
                    labels: [("collection", PushStore.Tally.label(collection)), ("status", status.rawValue)]
                ).increment(by: Int64(count))
                if status.lost {
                    registry.makeCounter(
                        descriptor: Self.descriptor("habitsync_conflicts", unit: "total", "Changes that did not win (superseded or rejected), as kept in the conflict log."),
                        labels: [("collection", PushStore.Tally.label(collection))]
                    ).increment(by: Int64(count))
                }
            }
        }
    }

    /// A round of webhook attempts: delivered, to be tried again, dead (attempts spent).
    public func recordWebhookAttempts(delivered: Int, retried: Int, dead: Int) {
        for (outcome, count) in [("delivered", delivered), ("retried", retried), ("dead", dead)] where count > 0 {
            registry.makeCounter(
                descriptor: Self.descriptor(
                    "habitsync_webhook_attempts", unit: "total", "Webhook delivery attempts by outcome: delivered, retried (failed, to be tried again) or dead (failed, attempts spent)."),
                labels: [("outcome", outcome)]
            ).increment(by: Int64(count))
        }
    }

    /// A background wake: sent, the token dropped (APNs says it is gone), or failed.
    public func recordWake(_ outcome: WakeQueue.Outcome) {
        let label =
            switch outcome {
            case .sent: "sent"
            case .tokenInvalid: "token_dropped"
            case .failed: "failed"
            }
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_wakes", unit: "total", "APNs background wakes by outcome: sent, token_dropped (APNs said the token is gone) or failed."),
            labels: [("outcome", label)]
        ).increment()
    }

    /// Webhook deliveries the retention turned dead (pending too long) or deleted.
    public func recordWebhookPruned(_ rows: Int) {
        registry.makeCounter(descriptor: Self.descriptor("habitsync_webhook_pruned", unit: "total", "Finished webhook deliveries deleted after the retention.")).increment(
            by: Int64(rows))
    }

    public func recordPulled(_ count: Int) {
        registry.makeCounter(descriptor: Self.descriptor("habitsync_changes_pulled", unit: "total", "Changes delivered by pull.")).increment(by: Int64(count))
    }

    public func recordAccountErased() {
        registry.makeCounter(descriptor: Self.descriptor("habitsync_accounts_erased", unit: "total", "Accounts erased through DELETE /v1/account.")).increment()
    }

    public func recordOpenStreams(_ count: Int) {
        registry.makeGauge(descriptor: Self.descriptor("habitsync_realtime_streams_open", "Open event streams (GET /v1/sync/events).")).set(Int64(count))
    }

    public func recordStreamEvent(_ kind: String) {
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_realtime_events_sent", unit: "total", "Events written to streams, by kind: change, pull, close, heartbeat."),
            labels: [("kind", kind)]
        ).increment()
    }

    public func recordNotification() {
        registry.makeCounter(descriptor: Self.descriptor("habitsync_realtime_notifications_received", unit: "total", "Change notifications received from PostgreSQL (LISTEN).")).increment()
    }

    public func recordListening(_ listening: Bool) {
        registry.makeGauge(descriptor: Self.descriptor("habitsync_realtime_listening", "1 while the LISTEN connection for change notices is up.")).set(Int64(listening ? 1 : 0))
    }

    /// A connection closed (or a body cut off) by `SlowClientGuard` or `ConnectionRegistry`:
    /// header_timeout, body_timeout, body_too_slow, evicted_idle, refused_at_cap.
    public func recordConnectionCut(reason: String) {
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_http_connections_cut", unit: "total", "HTTP connections closed or bodies cut off for a slow client or at the connection cap, by reason."),
            labels: [("reason", reason)]
        ).increment()
    }

    public func recordExpensiveReadRefused(_ kind: String) {
        registry.makeCounter(
            descriptor: Self.descriptor("habitsync_expensive_reads_refused", unit: "total", "Statistics or export requests refused (429) because the user already ran as many as allowed."),
            labels: [("kind", kind)]
        ).increment()
    }

    public func recordListenerReconnect() {
        registry.makeCounter(descriptor: Self.descriptor("habitsync_realtime_listener_reconnects", unit: "total", "Times the LISTEN connection was re-established after a loss.")).increment()
    }

    /// Renders the Prometheus text format, refreshing the gauges read at scrape time.
    /// On Citus, each worker's reachability from the coordinator (`/metrics` probes it): the
    /// users whose shards are on a worker at 0 cannot be served until it is back.
    public func recordWorkers(_ workers: [DistributionStore.WorkerReachability]) {
        let descriptor = Self.descriptor("habitsync_citus_worker_reachable", "1 while the Citus coordinator can connect to this worker; 0: the users whose shards it holds get 503.")
        for worker in workers {
            registry.makeGauge(descriptor: descriptor, labels: [("node", worker.node)]).set(Int64(worker.reachable ? 1 : 0))
        }
        registry.makeGauge(descriptor: Self.descriptor("habitsync_citus_workers_unreachable", "Citus workers the coordinator cannot connect to."))
            .set(Int64(workers.filter { !$0.reachable }.count))
    }

    public func render(pool: PGPool, schemaVersion: Int?, binaryHeadVersion: Int) -> [UInt8] {
        let statistics = pool.statistics
        registry.makeGauge(descriptor: Self.descriptor("habitsync_db_pool_connections_in_use", "Database connections lent out.")).set(Int64(statistics.inUse))
        registry.makeGauge(descriptor: Self.descriptor("habitsync_db_pool_connections_idle", "Open database connections waiting to be lent.")).set(Int64(statistics.idle))
        registry.makeGauge(descriptor: Self.descriptor("habitsync_db_pool_waiting", "Requests waiting for a database connection.")).set(Int64(statistics.waiting))
        registry.makeGauge(descriptor: Self.descriptor("habitsync_db_pool_max_connections", "Configured pool size.")).set(Int64(pool.configuration.maximumConnections))
        let newErrors = reportedPoolErrors.withLock { reported -> Int in
            let delta = statistics.errors - reported
            reported = statistics.errors
            return delta
        }
        let errors = registry.makeCounter(descriptor: Self.descriptor("habitsync_db_pool_errors", unit: "total", "Database connections that failed to open or broke in use."))
        if newErrors > 0 { errors.increment(by: Int64(newErrors)) }
        if let schemaVersion {
            registry.makeGauge(descriptor: Self.descriptor("habitsync_schema_version", "Highest schema migration applied to the database.")).set(Int64(schemaVersion))
        }
        registry.makeGauge(descriptor: Self.descriptor("habitsync_schema_binary_head_version", "Highest schema migration this binary ships.")).set(Int64(binaryHeadVersion))
        let dropped = StructuredLogHandler.droppedLines
        let newDropped = reportedDroppedLogLines.withLock { reported -> Int in
            defer { reported = dropped }
            return dropped - reported
        }
        let droppedCounter = registry.makeCounter(
            descriptor: Self.descriptor("habitsync_log_lines_dropped", unit: "total", "Log lines the process could not write (standard error closed or full); never a crash."))
        if newDropped > 0 { droppedCounter.increment(by: Int64(newDropped)) }
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
