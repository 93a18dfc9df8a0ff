-- habitsync:no-transaction
-- The webhook deliverer's claim reads each active endpoint's due deliveries on their own
-- (WebhookQueue.claim), so a paused or resting endpoint's backlog is never read. With 0046's
-- index (pending deliveries by next attempt, every endpoint together) every claim walked the
-- backlog of a receiver that was down, oldest first, before reaching anything it could send:
-- 451 buffers a claim beside 20,000 waiting (WebhookTests), growing with them, on every
-- replica, every round; endpoint by endpoint, about 80 however many wait.
--
-- Built concurrently, so pushes go on writing the outbox while it is built. Re-runnable: an
-- interrupted build leaves an INVALID index, which the first statement removes.
-- squawk assumes every file runs in a transaction (.squawk.toml); this one does not (marker above).

-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due_by_endpoint;
-- squawk-ignore ban-concurrent-index-creation-in-transaction
CREATE INDEX CONCURRENTLY webhook_deliveries_due_by_endpoint ON webhook_deliveries (tenant_id, endpoint_id, next_attempt_at) WHERE state = 'pending';
COMMENT ON INDEX webhook_deliveries_due_by_endpoint IS 'An endpoint''s pending deliveries by next attempt: the deliverer''s claim, endpoint by endpoint (migration 0048).';
-- squawk-ignore ban-concurrent-index-creation-in-transaction
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due;
