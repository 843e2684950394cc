-- Risks (a project's issue-tracker entries with their own small status machine)
-- and project notes. Like tasks, their foreign key to projects does not cascade:
-- a project delete removes them itself, emitting their deleted events.

create table risks (
    workspace_id uuid not null,
    id           uuid not null,
    project_id   uuid not null,
    title        text not null check (length(title) between 1 and 300),
    description  text check (length(description) <= 20000),
    severity     text not null default 'MEDIUM' check (severity in ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL')),
    status       text not null default 'OPEN' check (status in ('OPEN', 'MITIGATING', 'RESOLVED')),
    owner_id     uuid,
    created_at   timestamptz not null default now(),
    updated_at   timestamptz not null default now(),
    archived_at  timestamptz,
    primary key (workspace_id, id),
    foreign key (workspace_id, project_id) references projects (workspace_id, id)
);
create index risks_project on risks (workspace_id, project_id, id);
create index risks_status on risks (workspace_id, status, id);
create index risks_severity on risks (workspace_id, severity, id);
create index risks_owner on risks (workspace_id, owner_id, id);
create index risks_created on risks (workspace_id, created_at, id);
create index risks_title_trgm on risks using gin (title gin_trgm_ops);

create table notes (
    workspace_id uuid not null,
    id           uuid not null,
    project_id   uuid not null,
    body         text not null check (length(body) between 1 and 20000),
    created_at   timestamptz not null default now(),
    updated_at   timestamptz not null default now(),
    primary key (workspace_id, id),
    foreign key (workspace_id, project_id) references projects (workspace_id, id)
);
create index notes_project on notes (workspace_id, project_id, id);
create index notes_body_trgm on notes using gin (body gin_trgm_ops);

alter table risks enable row level security;
alter table risks force row level security;
create policy tenant_isolation on risks
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table notes enable row level security;
alter table notes force row level security;
create policy tenant_isolation on notes
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

grant select, insert, update, delete on risks, notes to pmapi_app;
