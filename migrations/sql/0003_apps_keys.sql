-- Apps (the container for API access) and their API keys. Secrets are stored as
-- SHA-256 only. Key rows are never deleted: a revoked key stays for audit, even
-- after its app is removed, so api_keys has no foreign key to apps.

create table apps (
    workspace_id          uuid not null,
    client_id             text not null,
    name                  text not null check (length(name) between 1 and 200),
    description           text check (length(description) <= 2000),
    scopes                text[] not null default '{}',
    status                text not null default 'ACTIVE' check (status in ('ACTIVE', 'DISABLED')),
    secret_hash           bytea not null,
    secret_prefix         text not null,
    rate_limit_per_minute integer check (rate_limit_per_minute between 1 and 1000000),
    created_by            uuid,
    created_at            timestamptz not null default now(),
    updated_at            timestamptz not null default now(),
    disabled_at           timestamptz,
    primary key (workspace_id, client_id)
);

create table api_keys (
    workspace_id        uuid not null,
    id                  uuid not null,
    client_id           text not null,
    name                text not null check (length(name) between 1 and 200),
    prefix              text not null,
    last_four           text not null,
    hash                bytea not null,
    scopes              text[] not null default '{}',
    expires_at          timestamptz,
    created_at          timestamptz not null default now(),
    last_used_at        timestamptz,
    revoked_at          timestamptz,
    -- The value replaced by the last regenerate, accepted until previous_expires_at.
    previous_hash       bytea,
    previous_expires_at timestamptz,
    primary key (workspace_id, id)
);
create unique index api_keys_hash on api_keys (workspace_id, hash);
create index api_keys_previous_hash on api_keys (workspace_id, previous_hash) where previous_hash is not null;
create index api_keys_client on api_keys (workspace_id, client_id, id);

-- Idempotency-Key records, kept 24 hours per app (Stripe's and the IETF draft's
-- window); a periodic job deletes older ones.
create table idempotency_keys (
    workspace_id    uuid not null,
    client_id       text not null,
    key             text not null check (length(key) between 1 and 255),
    request_hash    bytea not null,
    status          text not null default 'IN_FLIGHT' check (status in ('IN_FLIGHT', 'DONE')),
    response_status integer,
    response_body   bytea,
    created_at      timestamptz not null default now(),
    primary key (workspace_id, client_id, key)
);

alter table apps enable row level security;
alter table apps force row level security;
create policy tenant_isolation on apps
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table api_keys enable row level security;
alter table api_keys force row level security;
create policy tenant_isolation on api_keys
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table idempotency_keys enable row level security;
alter table idempotency_keys force row level security;
create policy tenant_isolation on idempotency_keys
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

grant select, insert, update, delete on apps, api_keys, idempotency_keys to pmapi_app;
