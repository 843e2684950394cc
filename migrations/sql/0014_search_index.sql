-- Search at database speed (docs/decisions.md "Search").
--
-- Every searchable table gets its text as a stored tsvector (search_doc: the
-- title weighted A, the longer text B), computed once on write instead of on
-- every read, with a GIN index; and a trigram GIN index on each text the fuzzy
-- branch compares (resource/facet Search.Fuzzy) that had none. Those are bare
-- columns, never expressions: under row-level security PostgreSQL uses an index
-- only for a condition of LEAKPROOF parts, and coalesce() is not one
-- (pgcluster.SearchLeakproof marks the operators' functions).
--
-- One change per statement, in a DO block as 0012: Citus refuses several DDL
-- statements in one query string; on Citus each statement reaches every shard
-- through the coordinator.
do $$
begin
    alter table projects add column search_doc tsvector generated always as (
        setweight(to_tsvector('english'::regconfig, name), 'A') ||
        setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')) stored;
    create index projects_search_doc on projects using gin (search_doc);
    create index projects_description_trgm on projects using gin (description gin_trgm_ops);

    alter table tasks add column search_doc tsvector generated always as (
        setweight(to_tsvector('english'::regconfig, title), 'A') ||
        setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')) stored;
    create index tasks_search_doc on tasks using gin (search_doc);
    create index tasks_description_trgm on tasks using gin (description gin_trgm_ops);
    -- A project's tasks in one status, newest first (the list's projectId and
    -- status filters together): by status alone the list read every task of
    -- the status in the workspace to find a project's.
    create index tasks_project_status on tasks (workspace_id, project_id, status, id);

    alter table risks add column search_doc tsvector generated always as (
        setweight(to_tsvector('english'::regconfig, title), 'A') ||
        setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B')) stored;
    create index risks_search_doc on risks using gin (search_doc);
    create index risks_description_trgm on risks using gin (description gin_trgm_ops);

    -- A note's title is the start of its body: the body is its one text.
    alter table notes add column search_doc tsvector generated always as (
        setweight(to_tsvector('english'::regconfig, body), 'A')) stored;
    create index notes_search_doc on notes using gin (search_doc);

    alter table action_items add column search_doc tsvector generated always as (
        setweight(to_tsvector('english'::regconfig, title), 'A') ||
        setweight(to_tsvector('english'::regconfig, coalesce(description, '') || ' ' || coalesce(owner_hint, '')), 'B')) stored;
    create index action_items_search_doc on action_items using gin (search_doc);
    create index action_items_description_trgm on action_items using gin (description gin_trgm_ops);
    create index action_items_owner_hint_trgm on action_items using gin (owner_hint gin_trgm_ops);

    alter table rrca_analyses add column search_doc tsvector generated always as (
        setweight(to_tsvector('english'::regconfig, title), 'A') ||
        setweight(to_tsvector('english'::regconfig, problem_statement), 'B')) stored;
    create index rrca_analyses_search_doc on rrca_analyses using gin (search_doc);
    create index rrca_analyses_problem_trgm on rrca_analyses using gin (problem_statement gin_trgm_ops);
end $$;
