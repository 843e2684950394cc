-- How a transaction on Citus binds its workspace (tenant.SetLocal mode;
-- docs/decisions/tenancy-and-citus.md).
--
-- pmapi_bind_workspace makes the SET LOCAL of the workspace setting from a
-- parameter, so a pooled connection prepares one statement for every
-- workspace instead of one per workspace, and Citus still carries the SET
-- LOCAL to any node it sends the transaction's statements to.
--
-- pmapi_hold_workspace, for a routed write, binds the workspace the same way
-- and takes its shard group's placement lock in share mode for the rest of
-- the transaction, as each Citus write takes it per statement: a shard split
-- or move (which takes it exclusively) then waits for the transaction, or the
-- transaction waits at its start for the split or move. A write that waited
-- inside a later statement instead would, where Citus runs it locally, go to
-- the new shard with a snapshot taken before the split committed, and see none
-- of its rows. It is a security definer function because Citus lets only a
-- table's owner take the lock; every name in it is schema-qualified and it
-- sets nothing else, so the caller's search_path cannot reach into it, and
-- the lock is the share mode any write takes. Only Citus has
-- lock_shard_metadata: it is called on Citus alone.
create function pmapi_bind_workspace(ws uuid) returns void
language plpgsql
as $$
begin
    execute pg_catalog.format('set local pmapi.workspace_id = %L', ws::text);
end $$;

create function pmapi_hold_workspace(ws uuid) returns void
language plpgsql security definer
as $$
begin
    execute pg_catalog.format('set local pmapi.workspace_id = %L', ws::text);
    perform pg_catalog.lock_shard_metadata(5,
        array[pg_catalog.get_shard_id_for_distribution_column('public.users'::pg_catalog.regclass, ws)]);
end $$;

revoke all on function pmapi_hold_workspace(uuid) from public;
grant execute on function pmapi_bind_workspace(uuid) to pmapi_app;
grant execute on function pmapi_hold_workspace(uuid) to pmapi_app;
