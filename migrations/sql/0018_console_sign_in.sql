-- Sign-in to the console with OpenID Connect (docs/decisions/console.md).
--
-- user_emails is the directory of people: which workspaces invited an email
-- address. Users live in tenant tables under row-level security, one
-- workspace at a time and possibly on different shards, so the verified email
-- of an identity provider could not find its workspaces without a global
-- table read before any workspace is known, as client_directory is for client
-- ids. It holds no more than the address and the workspace; the users row on
-- the workspace's shard stays the truth (sign-in reads it there), and
-- authz.InviteUser writes the entry before the user, so a user never exists
-- without one. On Citus it is a reference table.
--
-- console_sign_ins holds the server's half of a sign-in under way, keyed by
-- the SHA-256 of a random value the browser holds: the state, nonce and PKCE
-- verifier of an authorization request (LOGIN), the verified email of a
-- person choosing among workspaces (PICK). Each row is taken once (DELETE
-- ... RETURNING), so a replayed callback finds nothing, on any instance.
--
-- One DDL statement per command, in a DO block as 0015.
do $$
begin
    create table user_emails (
        email        text not null check (email = lower(email) and length(email) between 3 and 320),
        workspace_id uuid not null references workspaces (id) on delete cascade,
        created_at   timestamptz not null default now(),
        primary key (email, workspace_id)
    );
    create index user_emails_workspace on user_emails (workspace_id);
    perform pmapi_place('user_emails', 'reference');

    create table console_sign_ins (
        key_hash   bytea primary key,
        kind       text not null check (kind in ('LOGIN', 'PICK')),
        data       jsonb not null,
        expires_at timestamptz not null
    );
    create index console_sign_ins_expiry on console_sign_ins (expires_at);
    perform pmapi_place('console_sign_ins', 'reference');

    -- The users that exist already. Row-level security shows the migration no
    -- workspace, so it is off for the copy, as in 0015. Only workspaces this
    -- database's directory knows: a shard's own copy of the directory tables
    -- is empty.
    alter table users disable row level security;
    insert into user_emails (email, workspace_id)
        select distinct lower(u.email), u.workspace_id from users u
        where u.workspace_id in (select id from workspaces)
        on conflict do nothing;
    alter table users enable row level security;

    grant select, insert, delete on user_emails, console_sign_ins to pmapi_app;
end $$;
