-- The directory: which workspaces exist, where each lives (its shard) and which
-- client ids belong to it. These are the only tables without row-level security:
-- they are read before a workspace is known (to resolve X-Client-ID), hold no
-- tenant content, and on Citus would be reference tables.

grant select on schema_migrations to pmapi_app;

create table workspaces (
    id                uuid primary key,
    name              text not null check (length(name) between 1 and 200),
    status            text not null default 'ACTIVE' check (status in ('ACTIVE', 'SUSPENDED')),
    shard             text not null default 'default' check (shard ~ '^[a-z0-9_-]{1,63}$'),
    console_client_id text not null unique,
    created_at        timestamptz not null default now(),
    suspended_at      timestamptz
);

create table client_directory (
    client_id    text primary key,
    workspace_id uuid not null references workspaces (id) on delete cascade,
    kind         text not null check (kind in ('CONSOLE', 'APP'))
);
create index client_directory_workspace on client_directory (workspace_id);

grant select, insert, update, delete on workspaces, client_directory to pmapi_app;
