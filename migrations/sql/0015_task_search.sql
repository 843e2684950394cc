-- A task's searchable text moves out of its hot row (docs/decisions.md,
-- "Search text beside the row").
--
-- tasks_status indexes the status, so no status change is a HOT update: each
-- writes a new entry into every index of tasks, and PostgreSQL 15 computes a
-- stored generated column again on every UPDATE. With 0014's search_doc and
-- trigram GIN indexes on tasks a status update cost PostgreSQL four and a half
-- times the CPU of one without them (docs/performance.md, "What a status update costs").
-- task_search holds a copy of the title and description, their stored
-- tsvector and the trigram indexes; the task store writes it only when the
-- text changes, so a status change touches none of them. It is keyed like
-- tasks, colocated with it on Citus, under the same row-level security, and
-- goes with its task (ON DELETE CASCADE).
--
-- One change per statement, in a DO block as 0012: Citus refuses several DDL
-- statements in one query string, and the foreign key comes after the table is
-- placed (Citus 13.2 crashes adding a key from a local table to a distributed
-- one).
do $$
begin
    create table task_search (
        workspace_id uuid not null,
        id           uuid not null,
        title        text not null,
        description  text,
        search_doc   tsvector generated always as (
            setweight(to_tsvector('english'::regconfig, title), 'A') ||
            setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')) stored,
        primary key (workspace_id, id)
    );
    -- Only search reads it, a few hundred rows by an index at a time: a
    -- parallel plan's worker processes cost far more than they save. At
    -- 100,000 tasks the planner chose one for the word matches and PostgreSQL
    -- spent 16 ms a search in make bench, against 2.7 ms before 0015.
    alter table task_search set (parallel_workers = 0);
    perform pmapi_place('task_search', 'distributed');
    alter table task_search add constraint task_search_task_fkey
        foreign key (workspace_id, id) references tasks (workspace_id, id) on delete cascade;

    -- Existing tasks' text. Row-level security shows the migration no
    -- workspace, so it is off for the copy; the DDL's lock keeps every other
    -- session out of both tables until this commits.
    alter table tasks disable row level security;
    insert into task_search (workspace_id, id, title, description)
        select workspace_id, id, title, description from tasks;
    alter table tasks enable row level security;

    create index task_search_doc on task_search using gin (search_doc);
    create index task_search_title_trgm on task_search using gin (title gin_trgm_ops);
    create index task_search_description_trgm on task_search using gin (description gin_trgm_ops);

    alter table task_search enable row level security;
    alter table task_search force row level security;
    create policy tenant_isolation on task_search
        using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
        with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);
    grant select, insert, update, delete on task_search to pmapi_app;

    alter table tasks drop column search_doc;
    drop index tasks_title_trgm;
    drop index tasks_description_trgm;
end $$;
