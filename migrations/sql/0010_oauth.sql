-- OAuth 2.0 device authorization (RFC 8628) with JWT access tokens (RFC 9068)
-- and rotating refresh tokens. Codes and refresh tokens are stored as SHA-256.

-- Directory-style tables, no RLS: read before a workspace is known.
-- The signing keys are the server's, not a workspace's; private keys are sealed
-- under PMAPI_SECRET_KEY. A user code leads from the verification page (which
-- only knows the code) to the workspace that issued it.
create table oauth_signing_keys (
    kid            text primary key,
    alg            text not null,
    private_sealed bytea not null,
    public_jwk     jsonb not null,
    created_at     timestamptz not null default now(),
    retired_at     timestamptz,
    publish_until  timestamptz
);
create table oauth_user_codes (
    user_code_hash bytea primary key,
    workspace_id   uuid not null references workspaces (id) on delete cascade,
    expires_at     timestamptz not null
);
grant select, insert, update, delete on oauth_signing_keys, oauth_user_codes to pmapi_app;

create table oauth_grants (
    workspace_id uuid not null,
    id           uuid not null,
    client_id    text not null,
    user_id      uuid not null,
    scopes       text[] not null,
    created_at   timestamptz not null default now(),
    revoked_at   timestamptz,
    primary key (workspace_id, id)
);
create index oauth_grants_client on oauth_grants (workspace_id, client_id) where revoked_at is null;

create table oauth_device_codes (
    workspace_id     uuid not null,
    id               uuid not null,
    client_id        text not null,
    device_code_hash bytea not null,
    user_code_hash   bytea not null,
    scopes           text[] not null,
    status           text not null default 'PENDING' check (status in ('PENDING', 'APPROVED', 'DENIED', 'REDEEMED')),
    user_id          uuid,
    grant_id         uuid,
    interval_seconds integer not null default 5,
    last_polled_at   timestamptz,
    expires_at       timestamptz not null,
    created_at       timestamptz not null default now(),
    primary key (workspace_id, id)
);
create unique index oauth_device_codes_device on oauth_device_codes (workspace_id, device_code_hash);
create unique index oauth_device_codes_user on oauth_device_codes (workspace_id, user_code_hash);

create table oauth_refresh_tokens (
    workspace_id uuid not null,
    id           uuid not null,
    grant_id     uuid not null,
    token_hash   bytea not null,
    scopes       text[] not null,
    created_at   timestamptz not null default now(),
    used_at      timestamptz,
    expires_at   timestamptz not null,
    primary key (workspace_id, id),
    foreign key (workspace_id, grant_id) references oauth_grants (workspace_id, id)
);
create unique index oauth_refresh_tokens_hash on oauth_refresh_tokens (workspace_id, token_hash);

do $$
declare t text;
begin
    foreach t in array array['oauth_grants', 'oauth_device_codes', 'oauth_refresh_tokens'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format($p$create policy tenant_isolation on %I
            using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
            with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)$p$, t);
        execute format('grant select, insert, update, delete on %I to pmapi_app', t);
    end loop;
end $$;
