-- How a transaction on Citus binds its workspace (tenant.SetLocal mode;
-- docs/decisions/tenancy-and-citus.md).
--
-- pmapi_bind_workspace makes the SET LOCAL of the workspace setting from a
-- parameter, so a pooled connection prepares one statement for every
-- workspace instead of one per workspace, and Citus still carries the SET
-- LOCAL to any node it sends the transaction's statements to. With hold, it
-- also takes the workspace's shard group's placement lock in share mode for
-- the rest of the transaction, as each Citus write takes it per statement:
-- a shard split or move (which takes it exclusively) then waits for the
-- transaction, or the transaction waits at its start for the split or move.
-- A write that waited inside a later statement instead would, where Citus
-- runs it locally, go to the new shard with a snapshot taken before the
-- split committed, and see none of its rows.
--
-- Security definer: Citus lets only a table's owner take the lock. Every name
-- is schema-qualified and the function sets nothing else, so the caller's
-- search_path cannot reach into it; the lock is the share mode any write
-- takes. On plain PostgreSQL hold is never asked for (lock_shard_metadata is
-- Citus's).
create function pmapi_bind_workspace(ws uuid, hold boolean) returns void
language plpgsql security definer
as $$
begin
    execute pg_catalog.format('set local pmapi.workspace_id = %L', ws::text);
    if hold then
        perform pg_catalog.lock_shard_metadata(5,
            array[pg_catalog.get_shard_id_for_distribution_column('public.users'::pg_catalog.regclass, ws)]);
    end if;
end $$;

revoke all on function pmapi_bind_workspace(uuid, boolean) from public;
grant execute on function pmapi_bind_workspace(uuid, boolean) to pmapi_app;
