-- Every table's place on a Citus cluster (docs/operations.md, "Citus"):
--   reference    copied to every node: the directory and server-wide tables, read
--                before a workspace is known;
--   distributed  sharded by workspace_id and colocated with users, so all of one
--                workspace's rows live on one node and every statement that names
--                workspace_id = $n is routed to one shard;
--   local        stays on the coordinator: the migration ledger and this table.
-- River's tables (schema river) are coordinator-local by rule: River's own
-- migrations create them, and its job rows commit with the change that queued them.
--
-- pmapi_place records a table's class and, when the citus extension is installed,
-- applies it at once, so a later migration can add a foreign key to the new table
-- right after placing it. On plain PostgreSQL it only records. `pmapi migrate up`
-- also places every recorded table (and propagates pmapi's functions to every
-- node) after the files have run, which distributes a database that was migrated
-- before Citus was installed. A test fails when a table has no class.
create table schema_table_classes (
    table_name text primary key,
    class      text not null check (class in ('reference', 'distributed', 'local')),
    -- Placement follows this order: a table comes after the tables it references.
    ordinal    integer generated always as identity
);

create function pmapi_place(tbl text, cls text) returns void
language plpgsql
set search_path = public, pg_catalog
as $$
declare placed boolean;
begin
    insert into schema_table_classes (table_name, class) values (tbl, cls)
        on conflict (table_name) do update set class = excluded.class;
    if cls = 'local' or not exists (select 1 from pg_extension where extname = 'citus') then
        return;
    end if;
    -- Dynamic SQL throughout: on plain PostgreSQL neither pg_dist_partition nor
    -- the Citus functions exist.
    execute 'select exists (select 1 from pg_dist_partition where logicalrelid = $1::regclass)'
        into placed using tbl;
    if placed then
        return;
    end if;
    -- One connection per node for the whole transaction: Citus refuses to
    -- distribute a table with foreign keys after parallel work in the same
    -- transaction, and a migration places many tables in one.
    perform set_config('citus.multi_shard_modify_mode', 'sequential', true);
    if cls = 'reference' then
        execute format('select create_reference_table(%L)', tbl);
    else
        execute format('select create_distributed_table(%L, %L, colocate_with => %L)',
                       tbl, 'workspace_id', case when tbl = 'users' then 'none' else 'users' end);
    end if;
end $$;

-- The fan-out job that was queued with each event. A sweeper re-queues the
-- fan-out of events still unfanned a minute on whose job is gone: on Citus the
-- event (on a worker) and its job (on the coordinator) commit in one phase each,
-- so a coordinator crash between the two commits can keep the one without the
-- other.
alter table events add column fanout_job_id bigint;
create index events_unfanned on events (workspace_id, occurred_at) where fanned_out_at is null;

-- In order: each table after the tables its foreign keys reference.
-- corrective_actions is placed by 0012, once its SET NULL keys are gone.
do $$
declare t text;
begin
    perform pmapi_place('schema_migrations', 'local');
    perform pmapi_place('schema_table_classes', 'local');
    foreach t in array array['workspaces', 'client_directory', 'oauth_signing_keys', 'oauth_user_codes'] loop
        perform pmapi_place(t, 'reference');
    end loop;
    foreach t in array array['users', 'sessions', 'apps', 'api_keys', 'idempotency_keys',
                             'projects', 'project_members', 'events', 'tasks',
                             'action_items', 'execution_logs',
                             'rrca_analyses', 'rrca_phase_history', 'rrca_nodes',
                             'rrca_similar', 'rrca_suggestion_runs', 'look_across_suggestions',
                             'risks', 'notes',
                             'webhook_subscriptions', 'webhook_deliveries', 'webhook_attempts',
                             'oauth_grants', 'oauth_device_codes', 'oauth_refresh_tokens'] loop
        perform pmapi_place(t, 'distributed');
    end loop;
end $$;

grant select on schema_table_classes to pmapi_app;
