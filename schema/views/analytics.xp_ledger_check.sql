-- analytics.xp_ledger_check
-- Users whose stored total XP differs from max(0, sum of their ledger). Always empty; a row is a bug.

CREATE VIEW analytics.xp_ledger_check AS
 SELECT p.tenant_id,
    p.user_id,
    p.total_xp AS stored_total_xp,
    GREATEST(0::bigint, COALESCE(sum(x.amount), 0::bigint)) AS ledger_total_xp
   FROM user_progress p
     LEFT JOIN xp_transactions x ON x.tenant_id = p.tenant_id AND x.user_id = p.user_id
  GROUP BY p.tenant_id, p.user_id, p.total_xp
 HAVING p.total_xp <> GREATEST(0::bigint, COALESCE(sum(x.amount), 0::bigint));

COMMENT ON COLUMN analytics.xp_ledger_check.tenant_id IS 'Tenant.';
COMMENT ON COLUMN analytics.xp_ledger_check.user_id IS 'User.';
COMMENT ON COLUMN analytics.xp_ledger_check.stored_total_xp IS 'user_progress.total_xp.';
COMMENT ON COLUMN analytics.xp_ledger_check.ledger_total_xp IS 'max(0, sum(xp_transactions.amount)).';

GRANT SELECT ON analytics.xp_ledger_check TO habitsync_analyst;
GRANT SELECT ON analytics.xp_ledger_check TO habitsync_app;
