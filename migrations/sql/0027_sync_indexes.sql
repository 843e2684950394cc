-- Incremental sync (docs/decisions/reads.md, "Incremental sync"): every list
-- a client mirrors filters on updated_at (updatedSince) and walks it in
-- order, ties by id (sort=updatedAt). One index a table keyed as the walk is
-- read, after the workspace, serves both: the walk reads its page off the
-- index in order from the cursor, and updatedSince is a range of it, so
-- neither scans a workspace's table. Bare columns, whose comparisons are
-- leakproof, so the index serves under row-level security (0014).
--
-- One change per statement, in a DO block as 0012: Citus refuses several DDL
-- statements in one query string; on Citus each create index reaches every
-- shard of the distributed table through the coordinator.
do $$
begin
    create index projects_updated on projects (workspace_id, updated_at, id);
    create index tasks_updated on tasks (workspace_id, updated_at, id);
    create index risks_updated on risks (workspace_id, updated_at, id);
    create index notes_updated on notes (workspace_id, updated_at, id);
    create index action_items_updated on action_items (workspace_id, updated_at, id);
    create index rrca_analyses_updated on rrca_analyses (workspace_id, updated_at, id);
end
$$;
