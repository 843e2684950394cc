-- The event log behind the event feed (docs/decisions/event-feed.md).
--
-- events stays the outbox it is (deleted after fan-out, read by key:
-- docs/decisions/webhook-outbox.md); event_log keeps every event for the
-- feed, in the order its workspace's transactions committed.
--
-- workspace_event_seq holds one row per workspace: the number of the last
-- event it logged. A writing transaction adds its events' count to it and
-- keeps the row lock until it commits, so a workspace's events are numbered
-- in commit order with no gap: a transaction numbered after another waited
-- for that one's commit (or rollback, which gives its numbers back) before it
-- could take its own. A reader that sees event n committed therefore sees
-- every event below n, and a cursor is simply the last number read.
--
-- pmapi_emit_events writes a transaction's events into both tables and takes
-- their numbers in one statement, so the write path keeps its round trips and
-- statements. It is a function, not one SQL statement with data-modifying
-- CTEs, because the numbers exist only once the lock is taken: inserting the
-- log rows from the update's RETURNING is INSERT ... SELECT, which Citus
-- ships with COPY, and COPY is refused under row-level security. Inside the
-- function every statement is a plain VALUES insert or a keyed update on one
-- workspace, routed to one shard.
do $$
begin
    create table workspace_event_seq (
        workspace_id uuid not null,
        n            bigint not null,
        primary key (workspace_id)
    );
    perform pmapi_place('workspace_event_seq', 'distributed');

    create table event_log (
        workspace_id uuid not null,
        seq          bigint not null,
        id           uuid not null,
        type         text not null,
        data         jsonb not null,
        occurred_at  timestamptz not null,
        primary key (workspace_id, seq)
    );
    perform pmapi_place('event_log', 'distributed');
end $$;

-- Row-level security and grants as the tables' own statements inside a DO
-- block: on Citus, a table's DDL propagated from a file of many statements
-- would be sent to the workers as that whole text (0019 does the same). The
-- server never updates a logged event; it may delete, as for every tenant
-- table, so that erasing a workspace can remove its rows.
do $$
declare t text;
begin
    foreach t in array array['workspace_event_seq', 'event_log'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format($p$create policy tenant_isolation on %I
            using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
            with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)$p$, t);
    end loop;
    grant select, insert, update, delete on workspace_event_seq to pmapi_app;
    grant select, insert, delete on event_log to pmapi_app;
end $$;

-- pmapi_emit_events logs and queues the events of one workspace: ids, types
-- and datas are parallel arrays in emission order, job the fan-out job that
-- will deliver them. It returns the number of the last event. Row security
-- applies (it runs as its caller). Each event's time is the clock when it is
-- written, after the lock is taken: a later change to one record gets a later
-- time even when its transaction began first, and the events of one
-- transaction get increasing times in their order.
create function pmapi_emit_events(ws uuid, job bigint, ids uuid[], types text[], datas jsonb[])
returns bigint
language plpgsql
as $$
declare
    k    int := pg_catalog.cardinality(ids);
    last bigint;
    at   timestamptz;
begin
    insert into public.workspace_event_seq as s (workspace_id, n) values (ws, k)
        on conflict (workspace_id) do update set n = s.n + excluded.n
        returning s.n into last;
    for i in 1 .. k loop
        at := pg_catalog.clock_timestamp();
        insert into public.events (workspace_id, fanout_job_id, id, type, data, occurred_at)
            values (ws, job, ids[i], types[i], datas[i], at);
        insert into public.event_log (workspace_id, seq, id, type, data, occurred_at)
            values (ws, last - k + i, ids[i], types[i], datas[i], at);
    end loop;
    return last;
end $$;

grant execute on function pmapi_emit_events(uuid, bigint, uuid[], text[], jsonb[]) to pmapi_app;
