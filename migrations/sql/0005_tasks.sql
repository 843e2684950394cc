-- Tasks: the work items of a project, with the status machine of spec section 3.
-- A project delete removes its tasks explicitly (to emit task.deleted for each),
-- so the foreign key does not cascade: a delete that forgot them fails instead of
-- dropping rows without their events.

create table tasks (
    workspace_id uuid not null,
    id           uuid not null,
    project_id   uuid not null,
    title        text not null check (length(title) between 1 and 500),
    description  text check (length(description) <= 10000),
    status       text not null default 'TODO'
                 check (status in ('TODO', 'IN_PROGRESS', 'BLOCKED', 'REVIEW', 'DONE')),
    priority     smallint not null default 3 check (priority between 1 and 5),
    assignee_id  uuid,
    reporter_id  uuid,
    start_date   timestamptz,
    due_date     timestamptz,
    created_at   timestamptz not null default now(),
    updated_at   timestamptz not null default now(),
    archived_at  timestamptz,
    primary key (workspace_id, id),
    foreign key (workspace_id, project_id) references projects (workspace_id, id)
);

-- Lists go newest first by id (time-ordered), so each filter's index ends in id
-- and serves the keyset page directly; the primary key serves the unfiltered list.
create index tasks_project on tasks (workspace_id, project_id, id);
create index tasks_status on tasks (workspace_id, status, id);
create index tasks_assignee on tasks (workspace_id, assignee_id, id);
create index tasks_due on tasks (workspace_id, due_date);
create index tasks_created on tasks (workspace_id, created_at);
create index tasks_title_trgm on tasks using gin (title gin_trgm_ops);

alter table tasks enable row level security;
alter table tasks force row level security;
create policy tenant_isolation on tasks
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

grant select, insert, update, delete on tasks to pmapi_app;
