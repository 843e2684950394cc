-- People and their console sessions. Tenant tables: workspace_id leads every key,
-- and row-level security limits each transaction to the workspace it has set.

create table users (
    workspace_id uuid not null,
    id           uuid not null,
    email        text not null check (length(email) between 3 and 320),
    name         text not null check (length(name) between 1 and 200),
    created_at   timestamptz not null default now(),
    primary key (workspace_id, id)
);
create unique index users_email on users (workspace_id, lower(email));

create table sessions (
    workspace_id uuid not null,
    id           uuid not null,
    user_id      uuid not null,
    token_hash   bytea not null,
    created_at   timestamptz not null default now(),
    expires_at   timestamptz not null,
    revoked_at   timestamptz,
    primary key (workspace_id, id),
    foreign key (workspace_id, user_id) references users (workspace_id, id) on delete cascade
);
create unique index sessions_token on sessions (workspace_id, token_hash);

alter table users enable row level security;
alter table users force row level security;
create policy tenant_isolation on users
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table sessions enable row level security;
alter table sessions force row level security;
create policy tenant_isolation on sessions
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

grant select, insert, update, delete on users, sessions to pmapi_app;
