-- Webhook delivery at database speed, and deliveries a receiver can trust
-- (docs/webhooks.md, docs/decisions.md "Webhooks").
--
-- Subscriptions get a circuit breaker, an optional rate cap and the one River
-- job that retries their waiting deliveries:
--   circuit, consecutive_failures, circuit_opened_at, probe_at
--                   CLOSED sends; OPEN (after consecutive_failures reached the
--                   configured bound) sends nothing until probe_at, when one
--                   delivery probes the endpoint (HALF_OPEN while it is sent);
--   max_per_second  at most this many deliveries a second, NULL for no cap;
--   retry_job_id, retry_at
--                   the River job (and its time) that sends the subscription's
--                   waiting deliveries; every change to them holds the row's lock,
--                   so at most one is live and none is forgotten.
-- Deliveries record when their event happened (occurred_at), so every replay
-- carries the event's id (event_id, already there) and time. Rows written before
-- this migration have NULL; readers fall back to created_at (no backfill: the
-- owner is bound by row-level security too, so a migration sees no workspace).
--
-- One change per statement, in a DO block as 0012: Citus refuses several DDL
-- statements in one query string.
do $$
begin
    alter table webhook_subscriptions add column circuit text not null default 'CLOSED';
    alter table webhook_subscriptions add constraint webhook_subscriptions_circuit_check
        check (circuit in ('CLOSED', 'OPEN', 'HALF_OPEN'));
    alter table webhook_subscriptions add column consecutive_failures integer not null default 0;
    alter table webhook_subscriptions add column circuit_opened_at timestamptz;
    alter table webhook_subscriptions add column probe_at timestamptz;
    alter table webhook_subscriptions add column max_per_second integer;
    alter table webhook_subscriptions add constraint webhook_subscriptions_max_per_second_check
        check (max_per_second between 1 and 1000);
    alter table webhook_subscriptions add column retry_job_id bigint;
    alter table webhook_subscriptions add column retry_at timestamptz;
    alter table webhook_deliveries add column occurred_at timestamptz;
    -- The retry job's read: a subscription's waiting deliveries that are due.
    -- It replaces the index by status alone, whose every reader names the
    -- subscription; deliveries sent at once are SUCCEEDED when written and
    -- enter neither.
    create index webhook_deliveries_waiting on webhook_deliveries (workspace_id, subscription_id, next_attempt_at)
        where status in ('PENDING', 'RETRYING');
    drop index webhook_deliveries_open;
    -- A delivery's id is derived from its event and subscription
    -- (webhook.DeliveryID), so the primary key already allows one delivery
    -- per event and subscription; the index that did is one index fewer for
    -- every delivery to write.
    drop index webhook_deliveries_once;
    -- Events are an outbox, read by id and, by the sweeper, by age while
    -- unfanned; nothing reads them by type.
    drop index events_type;
end $$;
