-- Usage per workspace, app and UTC day, and the replicas sharing one rate
-- budget (docs/decisions/usage-and-rate-budget.md).
--
-- usage_daily is written only by the flush of each process's in-memory
-- counters (tenant/usage): one upsert per workspace a minute, adding the
-- process's increments to what other replicas and earlier runs added. client_id
-- is the app's client id, or '' for what belongs to the workspace rather than
-- to one app (events, webhook deliveries). Distributed by workspace_id.
--
-- serve_replicas holds one row per running `pmapi serve`, refreshed by its
-- heartbeat (internal/replicas): every replica counts the rows seen lately and
-- takes that share of each key's rate limit. It names no workspace, so it
-- stays on the coordinator.
do $$
begin
    create table usage_daily (
        workspace_id      uuid not null,
        day               date not null,
        client_id         text not null,
        requests_2xx      bigint not null default 0,
        requests_4xx      bigint not null default 0,
        requests_5xx      bigint not null default 0,
        events            bigint not null default 0,
        deliveries        bigint not null default 0,
        deliveries_failed bigint not null default 0,
        primary key (workspace_id, day, client_id)
    );
    perform pmapi_place('usage_daily', 'distributed');

    create table serve_replicas (
        id         uuid primary key,
        host       text not null,
        started_at timestamptz not null default now(),
        seen_at    timestamptz not null default now()
    );
    perform pmapi_place('serve_replicas', 'local');
    grant select, insert, update, delete on serve_replicas to pmapi_app;
end $$;

-- Row-level security and grants as their own statements inside a DO block, as
-- in 0022: on Citus a distributed table's DDL from a file of many statements
-- would reach the workers as that whole text.
do $$
begin
    alter table usage_daily enable row level security;
    alter table usage_daily force row level security;
    create policy tenant_isolation on usage_daily
        using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
        with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);
    grant select, insert, update, delete on usage_daily to pmapi_app;
end $$;
