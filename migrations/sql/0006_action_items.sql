-- Action items (follow-ups that may belong to a project, or to none yet) and
-- their execution logs. Logs are append-only: the server's role may insert and
-- read them, never update or delete them (deleting an action item removes its
-- logs through the foreign key, which runs with the owner's rights).

create table action_items (
    workspace_id         uuid not null,
    id                   uuid not null,
    title                text not null check (length(title) between 1 and 300),
    description          text check (length(description) <= 20000),
    status               text not null default 'OPEN' check (status in ('OPEN', 'IN_PROGRESS', 'DONE', 'CANCELLED')),
    owner_hint           text check (length(owner_hint) <= 200),
    project_id           uuid,
    due_date             timestamptz,
    source               text not null default 'MANUAL' check (source in ('MANUAL', 'CORRECTIVE_ACTION', 'LOOK_ACROSS')),
    source_rrca_id       uuid,
    source_node_id       uuid,
    source_suggestion_id uuid,
    created_at           timestamptz not null default now(),
    updated_at           timestamptz not null default now(),
    archived_at          timestamptz,
    primary key (workspace_id, id),
    foreign key (workspace_id, project_id) references projects (workspace_id, id) on delete cascade
);
create index action_items_project on action_items (workspace_id, project_id, id);
create index action_items_status on action_items (workspace_id, status, id);
create index action_items_due on action_items (workspace_id, due_date, id);
create index action_items_title_trgm on action_items using gin (title gin_trgm_ops);

create table execution_logs (
    workspace_id   uuid not null,
    id             uuid not null,
    action_item_id uuid not null,
    kind           text not null check (kind in ('NOTE', 'PROGRESS', 'BLOCKER', 'EVIDENCE', 'STATUS_CHANGE')),
    message        text not null check (length(message) between 1 and 10000),
    author         text not null,
    created_at     timestamptz not null default now(),
    primary key (workspace_id, id),
    foreign key (workspace_id, action_item_id) references action_items (workspace_id, id) on delete cascade
);
create index execution_logs_item on execution_logs (workspace_id, action_item_id, id);

alter table action_items enable row level security;
alter table action_items force row level security;
create policy tenant_isolation on action_items
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table execution_logs enable row level security;
alter table execution_logs force row level security;
create policy tenant_isolation on execution_logs
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

grant select, insert, update, delete on action_items to pmapi_app;
grant select, insert on execution_logs to pmapi_app;
