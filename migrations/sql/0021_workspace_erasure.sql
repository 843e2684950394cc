-- A workspace's erasure under way (docs/decisions/workspace-lifecycle.md).
--
-- One row per workspace being erased, from DELETE /admin/v1/workspaces/{id}
-- until the erasure job deletes the workspace's directory row, which takes
-- this one with it (on delete cascade). It extends the workspaces row one to
-- one, so like that row it names the workspace by id, not by a workspace_id
-- column: that column marks a workspace's own rows, which the erasure finds
-- from the catalog and deletes before it gets here.
--   tables_total, tables_done  the tables holding the workspace's rows, and how
--                              many of them the job has emptied so far
--   last_error                 why the job's last run stopped, while River
--                              retries it
-- On Citus it is a reference table beside the directory.
--
-- A delivery's attempts now go with it (on delete cascade), as an action
-- item's execution logs do: the server's role may only append to both, so an
-- erasure deletes the parents and the foreign key, which runs with the
-- owner's rights, deletes the rest. Placed first: Citus refuses to place a
-- table after an ALTER of a distributed one in the same transaction.
do $$
begin
    create table workspace_erasures (
        id           uuid primary key references workspaces (id) on delete cascade,
        started_at   timestamptz not null default now(),
        updated_at   timestamptz not null default now(),
        tables_total integer not null default 0 check (tables_total >= 0),
        tables_done  integer not null default 0 check (tables_done between 0 and tables_total),
        last_error   text
    );
    perform pmapi_place('workspace_erasures', 'reference');
    grant select, insert, update, delete on workspace_erasures to pmapi_app;

    alter table webhook_attempts drop constraint webhook_attempts_workspace_id_delivery_id_fkey;
    alter table webhook_attempts add constraint webhook_attempts_delivery_fkey
        foreign key (workspace_id, delivery_id) references webhook_deliveries (workspace_id, id) on delete cascade;
end $$;
