-- Projects and their members, and the event log every change writes into (with
-- its River fan-out job) in the same transaction as the change itself.

create extension if not exists pg_trgm;

create table projects (
    workspace_id uuid not null,
    id           uuid not null,
    name         text not null check (length(name) between 1 and 200),
    description  text check (length(description) <= 10000),
    owner_id     uuid,
    rag_status   text not null default 'GREEN' check (rag_status in ('GREEN', 'AMBER', 'RED')),
    start_date   date,
    target_date  date,
    created_at   timestamptz not null default now(),
    updated_at   timestamptz not null default now(),
    archived_at  timestamptz,
    primary key (workspace_id, id)
);
create index projects_name_trgm on projects using gin (name gin_trgm_ops);
create index projects_owner on projects (workspace_id, owner_id, id);

create table project_members (
    workspace_id uuid not null,
    project_id   uuid not null,
    user_id      uuid not null,
    role         text not null default 'MEMBER' check (role in ('OWNER', 'MEMBER', 'VIEWER')),
    added_at     timestamptz not null default now(),
    primary key (workspace_id, project_id, user_id),
    foreign key (workspace_id, project_id) references projects (workspace_id, id) on delete cascade,
    foreign key (workspace_id, user_id) references users (workspace_id, id) on delete cascade
);

create table events (
    workspace_id  uuid not null,
    id            uuid not null,
    type          text not null,
    data          jsonb not null,
    client_id     text,
    occurred_at   timestamptz not null default now(),
    fanned_out_at timestamptz,
    primary key (workspace_id, id)
);
create index events_type on events (workspace_id, type, id);

alter table projects enable row level security;
alter table projects force row level security;
create policy tenant_isolation on projects
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table project_members enable row level security;
alter table project_members force row level security;
create policy tenant_isolation on project_members
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table events enable row level security;
alter table events force row level security;
create policy tenant_isolation on events
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

grant select, insert, update, delete on projects, project_members, events to pmapi_app;
