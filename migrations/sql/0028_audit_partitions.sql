-- The audit log kept for PMAPI_EVENT_RETENTION, in daily partitions of its
-- entries' time dropped whole, as the events are (0025; docs/decisions/
-- audit-and-quotas.md, "Retention").
--
-- audit_log is partitioned by at, the entry's time, which its key gains, as
-- PostgreSQL requires: ids are new for every entry, so (workspace_id, id, at)
-- is unique exactly where (workspace_id, id) was. Its foreign key to
-- audit_streams, which cascades an erasure to the entries, is the parent's
-- and every partition's. The server's role keeps only its insert and select
-- on the parent; partitions carry no row-level security and no grant of
-- their own, as in 0025.
--
-- The partitions are made and dropped by pmapi_make_audit_partitions and
-- pmapi_drop_audit_partitions, owner's functions the server's retention job
-- calls after 0025's, each in a transaction of its own. They lock audit_streams
-- and audit_log only, and 0025's functions lock none of these two tables, so
-- the two never wait for each other; against writers they follow 0025: every
-- lock the DDL needs is taken first, in one statement, under a lock timeout
-- shorter than the deadlock detector's wait, so the retention is what gives
-- up.
--
-- The existing entries move into the new table here, as 0025 moved the
-- events: one partition for the days before today that hold entries, one a
-- day from today for a week.

-- audit_streams first, as a writer takes it (an entry's stream row, then the
-- entry): attaching or dropping a partition also changes its foreign key to
-- audit_streams, which takes a lock there.
create function pmapi_lock_audit(mode text) returns void
language plpgsql
as $$
begin
    if mode not in ('share row exclusive', 'access exclusive') then
        raise exception 'pmapi_lock_audit: no lock mode %', mode;
    end if;
    execute format('lock table audit_streams, audit_log in %s mode', mode);
end $$;

-- pmapi_make_audit_partitions makes audit_log's daily partitions (UTC days,
-- named audit_log_pYYYY_MM_DD) that cover [since, until), leaving the days
-- that have one, as pmapi_make_partitions does for the events.
create function pmapi_make_audit_partitions(since timestamptz, until timestamptz) returns integer
language plpgsql
security definer
set search_path = public, pg_catalog
set timezone = 'UTC'
set lock_timeout = '500ms'
as $$
declare
    day   timestamptz;
    todo  timestamptz[] := '{}';
begin
    if until - since > interval '400 days' then
        raise exception 'pmapi_make_audit_partitions: % to % is more than 400 days', since, until;
    end if;
    day := date_trunc('day', since);
    while day < until loop
        if to_regclass(format('audit_log_p%s', to_char(day, 'YYYY_MM_DD'))) is null and not exists (
            select 1 from pg_inherits i
            where i.inhparent = 'audit_log'::regclass
              and pmapi_partition_end(i.inhrelid::regclass) > day
              and pmapi_partition_end(i.inhrelid::regclass) <= day + interval '1 day'
        ) then
            todo := todo || day;
        end if;
        day := day + interval '1 day';
    end loop;
    if cardinality(todo) = 0 then
        return 0;
    end if;
    perform pmapi_allow_partition_ddl();
    perform pmapi_lock_audit('share row exclusive');
    foreach day in array todo loop
        execute format('create table %I (like audit_log including defaults including constraints)',
                       format('audit_log_p%s', to_char(day, 'YYYY_MM_DD')));
        execute format('alter table audit_log attach partition %I for values from (%L) to (%L)',
                       format('audit_log_p%s', to_char(day, 'YYYY_MM_DD')), day, day + interval '1 day');
    end loop;
    return cardinality(todo);
end $$;

-- pmapi_drop_audit_partitions drops the partitions that hold nothing at or
-- after before. No table references audit_log, so a partition is dropped
-- without being detached. It keeps the last 23 hours whatever it is asked,
-- as pmapi_drop_partitions does.
create function pmapi_drop_audit_partitions(before timestamptz) returns integer
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
        raise exception 'pmapi_drop_audit_partitions: % is less than 24h ago; the retention is at least 24h', before;
    end if;
    select coalesce(array_agg(i.inhrelid::regclass order by pmapi_partition_end(i.inhrelid::regclass)), '{}')
        into parts
        from pg_inherits i
        where i.inhparent = 'audit_log'::regclass
          and pmapi_partition_end(i.inhrelid::regclass) <= before;
    if cardinality(parts) = 0 then
        return 0;
    end if;
    perform pmapi_allow_partition_ddl();
    perform pmapi_lock_audit('access exclusive');
    foreach part in array parts loop
        execute format('drop table %s', part);
    end loop;
    return cardinality(parts);
end $$;

revoke execute on function pmapi_lock_audit(text) from public;
revoke execute on function pmapi_make_audit_partitions(timestamptz, timestamptz) from public;
revoke execute on function pmapi_drop_audit_partitions(timestamptz) from public;
grant execute on function pmapi_make_audit_partitions(timestamptz, timestamptz) to pmapi_app;
grant execute on function pmapi_drop_audit_partitions(timestamptz) to pmapi_app;

-- The old table steps aside with its indexes, whose names the new one takes;
-- over one connection a node on Citus, as in 0025.
do $$
begin
    perform set_config('citus.multi_shard_modify_mode', 'sequential', true);
    alter table audit_log no force row level security;
    alter table audit_log rename to audit_log_unpartitioned;
    alter index audit_log_pkey rename to audit_log_unpartitioned_pkey;
    alter index audit_log_at rename to audit_log_unpartitioned_at;
    alter index audit_log_action rename to audit_log_unpartitioned_action;
end $$;

do $$
begin
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
        primary key (workspace_id, id, at)
    ) partition by range (at);
    create index audit_log_at on audit_log (workspace_id, at);
    create index audit_log_action on audit_log (workspace_id, action, id);
end $$;

do $$
declare
    first timestamptz;
    today timestamptz := date_trunc('day', now() at time zone 'UTC') at time zone 'UTC';
begin
    select min(at) into first from audit_log_unpartitioned;
    if first < today then
        execute format('create table audit_log_p_before partition of audit_log for values from (%L) to (%L)',
                       date_trunc('day', first at time zone 'UTC') at time zone 'UTC', today);
    end if;
    perform pmapi_make_audit_partitions(today, today + interval '8 days');
end $$;

do $$
begin
    perform pmapi_place('audit_log', 'distributed');
    alter table audit_log add constraint audit_log_stream_fkey
        foreign key (workspace_id) references audit_streams (workspace_id) on delete cascade;
end $$;

do $$
begin
    insert into audit_log (workspace_id, id, at, actor_type, actor_id, action, target_type, target_id, ip, request_id)
        select workspace_id, id, at, actor_type, actor_id, action, target_type, target_id, ip, request_id
        from audit_log_unpartitioned;
end $$;

do $$
begin
    drop table audit_log_unpartitioned;
    alter table audit_log enable row level security;
    alter table audit_log force row level security;
    create policy tenant_isolation on audit_log
        using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
        with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);
    grant select, insert on audit_log to pmapi_app;
end $$;
