-- Events, deliveries and attempts kept for PMAPI_EVENT_RETENTION, in daily
-- time partitions dropped whole (docs/decisions/event-feed.md, "Retention by
-- partition").
--
--   event_log           by occurred_at, the event's time;
--   webhook_deliveries  by occurred_at, its event's time (a replay carries its
--                       original's): a delivery's id is derived from its event
--                       and subscription, so (workspace_id, id, occurred_at) is
--                       unique exactly where (workspace_id, id) was, and a
--                       fan-out run twice still collides on the key;
--   webhook_attempts    by delivery_occurred_at, its delivery's partition key,
--                       which its foreign key names: an attempt sits in the
--                       partition of the same day as its delivery, so the two
--                       are dropped together (attempts first).
-- Each key gains its partition column, as PostgreSQL requires.
--
-- Partitions carry no row-level security and no grant of their own: the
-- server's role reaches them only through their parent, whose policy applies.
-- They are made and dropped by pmapi_make_partitions and
-- pmapi_drop_partitions, owner's functions the server's retention job calls.
--
-- The existing rows move into the new tables in this migration: each table is
-- renamed aside, its successor created with one partition for the days before
-- today (when there are rows) and a partition a day from today on, the rows
-- copied across and the old table dropped. Writers to these tables wait for
-- the copy (the rename locks the old table). The owner is bound by row-level
-- security too, so forcing is lifted for the copy and restored after it.
-- Deliveries from before 0013 have no occurred_at; they take created_at, which
-- is what readers showed for them already.

-- The partitions' upper bound, read from the catalog: PostgreSQL keeps a
-- bound only as the text of its expression.
create function pmapi_partition_end(part regclass) returns timestamptz
language sql stable
set timezone = 'UTC'
as $$
    select (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz
    from pg_class c where c.oid = part
$$;

-- Partition DDL reaches every shard by nature, so the server role's guard
-- against multi-shard statements (docs/operations.md, "Citus") is lifted for
-- the rest of the transaction that runs it, the retention job's own. On plain
-- PostgreSQL there is no such guard (and the owner may not set Citus's
-- settings there).
create function pmapi_allow_partition_ddl() returns void
language plpgsql
as $$
begin
    if exists (select 1 from pg_extension where extname = 'citus') then
        perform set_config('citus.multi_task_query_log_level', 'off', true);
    end if;
end $$;

-- The partition DDL below takes locks on the three tables and on
-- webhook_subscriptions (whose foreign key each delivery partition carries),
-- one table after another, where writers take them in their own order: under
-- writes that is a deadlock (seen on PostgreSQL and on Citus), whose loser
-- may be a writer. pmapi_lock_retained takes every lock the DDL needs first,
-- in one statement and one order, before the DDL, and only when there is DDL
-- to run; with the lock timeout below the deadlock detector's wait, the
-- retention is what gives up, and its job tries again a moment later. Writers
-- wait for the DDL itself, a catalog change of milliseconds, once a day.
create function pmapi_lock_retained(mode text) returns void
language plpgsql
as $$
begin
    if mode not in ('share row exclusive', 'access exclusive') then
        raise exception 'pmapi_lock_retained: no lock mode %', mode;
    end if;
    execute format('lock table webhook_subscriptions, webhook_deliveries, webhook_attempts, event_log in %s mode',
                   mode);
end $$;

-- pmapi_make_partitions makes the daily partitions (UTC days, named
-- <table>_pYYYY_MM_DD as Citus's create_time_partitions names them) of the
-- three tables that cover [since, until), leaving the days that have one.
-- Each is created on its own and attached, which locks the parent less than
-- CREATE TABLE ... PARTITION OF; Citus distributes a table attached to a
-- distributed parent, colocated with it.
create function pmapi_make_partitions(since timestamptz, until timestamptz) returns integer
language plpgsql
security definer
set search_path = public, pg_catalog
set timezone = 'UTC'
set lock_timeout = '500ms'
as $$
declare
    t     text;
    day   timestamptz;
    todo  text[] := '{}';
    i     int;
begin
    if until - since > interval '400 days' then
        raise exception 'pmapi_make_partitions: % to % is more than 400 days', since, until;
    end if;
    foreach t in array array['event_log', 'webhook_deliveries', 'webhook_attempts'] loop
        day := date_trunc('day', since);
        while day < until loop
            if to_regclass(format('%s_p%s', t, to_char(day, 'YYYY_MM_DD'))) is null and not exists (
                select 1 from pg_inherits i
                where i.inhparent = t::regclass
                  and pmapi_partition_end(i.inhrelid::regclass) > day
                  and pmapi_partition_end(i.inhrelid::regclass) <= day + interval '1 day'
            ) then
                todo := todo || array[t, day::text];
            end if;
            day := day + interval '1 day';
        end loop;
    end loop;
    if cardinality(todo) = 0 then
        return 0;
    end if;
    perform pmapi_allow_partition_ddl();
    perform pmapi_lock_retained('share row exclusive');
    for i in 1 .. cardinality(todo) / 2 loop
        t := todo[2 * i - 1];
        day := todo[2 * i]::timestamptz;
        execute format('create table %I (like %I including defaults including constraints)',
                       format('%s_p%s', t, to_char(day, 'YYYY_MM_DD')), t);
        execute format('alter table %I attach partition %I for values from (%L) to (%L)',
                       t, format('%s_p%s', t, to_char(day, 'YYYY_MM_DD')), day, day + interval '1 day');
    end loop;
    return cardinality(todo) / 2;
end $$;

-- pmapi_drop_partitions drops the partitions that hold nothing at or after
-- before (their upper bound is at most before), attempts before deliveries.
-- A referenced partition is detached first: PostgreSQL refuses to drop one
-- that a foreign key names, and detaching checks that no attempt points into
-- it. Whatever it is asked, it keeps the last 23 hours: the server asks for
-- at least 24, and its clock may run a little ahead of the database's.
create function pmapi_drop_partitions(before timestamptz) returns integer
language plpgsql
security definer
set search_path = public, pg_catalog
set timezone = 'UTC'
set lock_timeout = '500ms'
as $$
declare
    parts regclass[];
    part  regclass;
begin
    if before > now() - interval '23 hours' then
        raise exception 'pmapi_drop_partitions: % is less than 24h ago; the retention is at least 24h', before;
    end if;
    select coalesce(array_agg(i.inhrelid::regclass order by array_position(
               array['webhook_attempts', 'webhook_deliveries', 'event_log']::regclass[], i.inhparent::regclass),
               pmapi_partition_end(i.inhrelid::regclass)), '{}')
        into parts
        from pg_inherits i
        where i.inhparent in ('webhook_attempts'::regclass, 'webhook_deliveries'::regclass, 'event_log'::regclass)
          and pmapi_partition_end(i.inhrelid::regclass) <= before;
    if cardinality(parts) = 0 then
        return 0;
    end if;
    perform pmapi_allow_partition_ddl();
    perform pmapi_lock_retained('access exclusive');
    foreach part in array parts loop
        if exists (select 1 from pg_inherits where inhrelid = part and inhparent = 'webhook_deliveries'::regclass) then
            execute format('alter table webhook_deliveries detach partition %s', part);
        end if;
        execute format('drop table %s', part);
    end loop;
    return cardinality(parts);
end $$;

-- The server's role calls the two entry points only; the helpers run inside
-- them, as the owner.
revoke execute on function pmapi_allow_partition_ddl() from public;
revoke execute on function pmapi_lock_retained(text) from public;
revoke execute on function pmapi_make_partitions(timestamptz, timestamptz) from public;
revoke execute on function pmapi_drop_partitions(timestamptz) from public;
grant execute on function pmapi_make_partitions(timestamptz, timestamptz) to pmapi_app;
grant execute on function pmapi_drop_partitions(timestamptz) to pmapi_app;

-- The old tables step aside, with their indexes, whose names the new tables
-- take. Forcing is lifted so that the owner reads every workspace's rows. On
-- Citus the whole migration talks to each node over one connection: Citus
-- refuses to distribute a table after parallel DDL in the same transaction.
do $$
declare t text;
begin
    perform set_config('citus.multi_shard_modify_mode', 'sequential', true);
    foreach t in array array['event_log', 'webhook_deliveries', 'webhook_attempts'] loop
        execute format('alter table %I no force row level security', t);
        execute format('alter table %I rename to %I', t, t || '_unpartitioned');
        execute format('alter index %I rename to %I', t || '_pkey', t || '_unpartitioned_pkey');
    end loop;
    alter index webhook_deliveries_client rename to webhook_deliveries_unpartitioned_client;
    alter index webhook_deliveries_subscription rename to webhook_deliveries_unpartitioned_subscription;
    alter index webhook_deliveries_waiting rename to webhook_deliveries_unpartitioned_waiting;
    alter index webhook_attempts_delivery rename to webhook_attempts_unpartitioned_delivery;
end $$;

do $$
begin
    create table event_log (
        workspace_id uuid not null,
        seq          bigint not null,
        id           uuid not null,
        type         text not null,
        data         jsonb not null,
        occurred_at  timestamptz not null,
        primary key (workspace_id, seq, occurred_at)
    ) partition by range (occurred_at);

    create table webhook_deliveries (
        workspace_id    uuid not null,
        id              uuid not null,
        subscription_id uuid not null,
        client_id       text not null,
        event_id        uuid,
        event_type      text not null,
        data            jsonb not null,
        status          text not null default 'PENDING'
            check (status in ('PENDING', 'RETRYING', 'SUCCEEDED', 'DEAD', 'CANCELLED')),
        attempts        integer not null default 0,
        next_attempt_at timestamptz,
        last_status     integer,
        replay_of       uuid,
        job_id          bigint,
        created_at      timestamptz not null default now(),
        completed_at    timestamptz,
        occurred_at     timestamptz not null,
        attempt_log     jsonb,
        primary key (workspace_id, id, occurred_at)
    ) partition by range (occurred_at);
    create index webhook_deliveries_client on webhook_deliveries (workspace_id, client_id, id);
    create index webhook_deliveries_subscription on webhook_deliveries (workspace_id, subscription_id, id);
    create index webhook_deliveries_waiting on webhook_deliveries (workspace_id, subscription_id, next_attempt_at)
        where status in ('PENDING', 'RETRYING');

    create table webhook_attempts (
        workspace_id         uuid not null,
        id                   uuid not null,
        delivery_id          uuid not null,
        delivery_occurred_at timestamptz not null,
        attempt              integer not null,
        at                   timestamptz not null default now(),
        outcome              text not null check (outcome in ('succeeded', 'failed', 'blocked')),
        status_code          integer,
        latency_ms           double precision not null,
        response_snippet     text,
        error                text,
        primary key (workspace_id, id, delivery_occurred_at)
    ) partition by range (delivery_occurred_at);
    create index webhook_attempts_delivery on webhook_attempts (workspace_id, delivery_id, id);
end $$;

-- One partition for the days before today that hold rows, then one a day
-- from today for a week: the retention job keeps a week ahead from here on.
do $$
declare
    t     text;
    first timestamptz;
    today timestamptz := date_trunc('day', now() at time zone 'UTC') at time zone 'UTC';
begin
    foreach t in array array['event_log', 'webhook_deliveries', 'webhook_attempts'] loop
        if t = 'webhook_deliveries' then
            execute 'select min(coalesce(occurred_at, created_at)) from webhook_deliveries_unpartitioned' into first;
        elsif t = 'webhook_attempts' then
            execute 'select min(coalesce(d.occurred_at, d.created_at)) from webhook_attempts_unpartitioned a
                join webhook_deliveries_unpartitioned d on d.workspace_id = a.workspace_id and d.id = a.delivery_id'
                into first;
        else
            execute 'select min(occurred_at) from event_log_unpartitioned' into first;
        end if;
        if first < today then
            execute format('create table %I partition of %I for values from (%L) to (%L)',
                           t || '_p_before', t,
                           date_trunc('day', first at time zone 'UTC') at time zone 'UTC', today);
        end if;
    end loop;
    perform pmapi_make_partitions(today, today + interval '8 days');
end $$;

-- Placed in the order of their keys; a partition follows its parent.
do $$
begin
    perform pmapi_place('event_log', 'distributed');
    perform pmapi_place('webhook_deliveries', 'distributed');
    perform pmapi_place('webhook_attempts', 'distributed');
    alter table webhook_deliveries add constraint webhook_deliveries_workspace_id_subscription_id_fkey
        foreign key (workspace_id, subscription_id) references webhook_subscriptions (workspace_id, id);
    alter table webhook_attempts add constraint webhook_attempts_delivery_fkey
        foreign key (workspace_id, delivery_id, delivery_occurred_at)
        references webhook_deliveries (workspace_id, id, occurred_at) on delete cascade;
end $$;

-- The rows, each table in one statement (colocated on Citus, so each shard
-- copies its own).
do $$
begin
    insert into event_log (workspace_id, seq, id, type, data, occurred_at)
        select workspace_id, seq, id, type, data, occurred_at from event_log_unpartitioned;
    insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_id, event_type, data, status,
            attempts, next_attempt_at, last_status, replay_of, job_id, created_at, completed_at, occurred_at,
            attempt_log)
        select workspace_id, id, subscription_id, client_id, event_id, event_type, data, status,
            attempts, next_attempt_at, last_status, replay_of, job_id, created_at, completed_at,
            coalesce(occurred_at, created_at), attempt_log
        from webhook_deliveries_unpartitioned;
    insert into webhook_attempts (workspace_id, id, delivery_id, delivery_occurred_at, attempt, at, outcome,
            status_code, latency_ms, response_snippet, error)
        select a.workspace_id, a.id, a.delivery_id, coalesce(d.occurred_at, d.created_at), a.attempt, a.at, a.outcome,
            a.status_code, a.latency_ms, a.response_snippet, a.error
        from webhook_attempts_unpartitioned a
        join webhook_deliveries_unpartitioned d on d.workspace_id = a.workspace_id and d.id = a.delivery_id;
end $$;

do $$
declare t text;
begin
    drop table webhook_attempts_unpartitioned;
    drop table webhook_deliveries_unpartitioned;
    drop table event_log_unpartitioned;
    foreach t in array array['event_log', 'webhook_deliveries', 'webhook_attempts'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format($p$create policy tenant_isolation on %I
            using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
            with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)$p$, t);
    end loop;
    grant select, insert, delete on event_log to pmapi_app;
    grant select, insert, update, delete on webhook_deliveries to pmapi_app;
    grant select, insert on webhook_attempts to pmapi_app;
end $$;
