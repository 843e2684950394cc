-- The audit log and the workspaces' quotas (docs/decisions/audit-and-quotas.md).
--
-- audit_log holds one row per change to a workspace's credentials or
-- configuration, written in the change's own transaction. The server's role
-- may only append to it and read it (no UPDATE, no DELETE), so no bug of the
-- server can rewrite history. Erasure must still remove a workspace's rows:
-- like webhook_attempts (0021) they go through a foreign key that cascades,
-- which runs with the owner's rights, from audit_streams, one row per
-- workspace that has an audit log, which the server's role may delete.
--   actor_type, actor_id   who made the change: a user (its id), an app (its
--                          client id) or the operator (the admin API)
--   action                 what happened, "<noun>.<verb>" (key.revoked)
--   target_type, target_id what it happened to
--   ip, request_id         where the request came from and its X-Request-ID
-- at is indexed with the workspace: the list reads newest first since a time,
-- and the retention will drop old rows by it.
--
-- workspace_quotas holds the operator's limits of one workspace, null being
-- unlimited. Creations of apps, keys and webhook subscriptions lock the row
-- (FOR UPDATE) while they count and insert, so two creations never both see
-- room for one. A workspace without a row has no limits.
do $$
begin
    create table audit_streams (
        workspace_id uuid not null,
        created_at   timestamptz not null default now(),
        primary key (workspace_id)
    );
    perform pmapi_place('audit_streams', 'distributed');

    create table audit_log (
        workspace_id uuid not null,
        id           uuid not null,
        at           timestamptz not null default now(),
        actor_type   text not null check (actor_type in ('user', 'app', 'operator')),
        actor_id     text not null check (length(actor_id) between 1 and 200),
        action       text not null check (length(action) between 3 and 100),
        target_type  text not null check (length(target_type) between 1 and 100),
        target_id    text not null check (length(target_id) between 1 and 200),
        ip           text check (length(ip) <= 100),
        request_id   text check (length(request_id) <= 200),
        primary key (workspace_id, id),
        foreign key (workspace_id) references audit_streams (workspace_id) on delete cascade
    );
    create index audit_log_at on audit_log (workspace_id, at);
    create index audit_log_action on audit_log (workspace_id, action, id);
    perform pmapi_place('audit_log', 'distributed');

    create table workspace_quotas (
        workspace_id       uuid not null,
        apps               bigint check (apps >= 0),
        keys_per_app       bigint check (keys_per_app >= 0),
        webhooks           bigint check (webhooks >= 0),
        requests_per_month bigint check (requests_per_month >= 0),
        updated_at         timestamptz not null default now(),
        primary key (workspace_id)
    );
    perform pmapi_place('workspace_quotas', 'distributed');
end $$;

-- Row-level security and grants as the tables' own statements inside a DO
-- block, as in 0022.
do $$
declare t text;
begin
    foreach t in array array['audit_streams', 'audit_log', 'workspace_quotas'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format($p$create policy tenant_isolation on %I
            using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
            with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)$p$, t);
    end loop;
    grant select, insert, delete on audit_streams to pmapi_app;
    grant select, insert on audit_log to pmapi_app;
    grant select, insert, update, delete on workspace_quotas to pmapi_app;
end $$;
