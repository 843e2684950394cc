-- Webhook subscriptions, deliveries and their attempts. Signing secrets are
-- sealed (AES-GCM under PMAPI_SECRET_KEY): every delivery needs the secret
-- itself, so a hash will not do, and the clear text never reaches the table.

create table webhook_subscriptions (
    workspace_id           uuid not null,
    id                     uuid not null,
    client_id              text not null,
    url                    text not null,
    events                 text[] not null,
    status                 text not null default 'ACTIVE' check (status in ('ACTIVE', 'DISABLED')),
    secret_sealed          bytea not null,
    secret_prefix          text not null,
    previous_secret_sealed bytea,
    previous_valid_until   timestamptz,
    disabled_reason        text,
    failing_since          timestamptz,
    created_at             timestamptz not null default now(),
    updated_at             timestamptz not null default now(),
    disabled_at            timestamptz,
    primary key (workspace_id, id)
);
create index webhook_subscriptions_client on webhook_subscriptions (workspace_id, client_id, id);

create table webhook_deliveries (
    workspace_id    uuid not null,
    id              uuid not null,
    subscription_id uuid not null,
    client_id       text not null,
    event_id        uuid,
    event_type      text not null,
    data            jsonb not null,
    status          text not null default 'PENDING' check (status in ('PENDING', 'RETRYING', 'SUCCEEDED', 'DEAD', 'CANCELLED')),
    attempts        integer not null default 0,
    next_attempt_at timestamptz,
    last_status     integer,
    replay_of       uuid,
    job_id          bigint,
    created_at      timestamptz not null default now(),
    completed_at    timestamptz,
    primary key (workspace_id, id),
    foreign key (workspace_id, subscription_id) references webhook_subscriptions (workspace_id, id)
);
-- One delivery per subscription and event: a retried fan-out job adds none twice.
create unique index webhook_deliveries_once on webhook_deliveries (workspace_id, subscription_id, event_id)
    where replay_of is null and event_id is not null;
create index webhook_deliveries_client on webhook_deliveries (workspace_id, client_id, id);
create index webhook_deliveries_subscription on webhook_deliveries (workspace_id, subscription_id, id);
create index webhook_deliveries_open on webhook_deliveries (workspace_id, status) where status in ('PENDING', 'RETRYING');

create table webhook_attempts (
    workspace_id     uuid not null,
    id               uuid not null,
    delivery_id      uuid not null,
    attempt          integer not null,
    at               timestamptz not null default now(),
    outcome          text not null check (outcome in ('succeeded', 'failed', 'blocked')),
    status_code      integer,
    latency_ms       double precision not null,
    response_snippet text,
    error            text,
    primary key (workspace_id, id),
    foreign key (workspace_id, delivery_id) references webhook_deliveries (workspace_id, id)
);
create index webhook_attempts_delivery on webhook_attempts (workspace_id, delivery_id, id);

alter table webhook_subscriptions enable row level security;
alter table webhook_subscriptions force row level security;
create policy tenant_isolation on webhook_subscriptions
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table webhook_deliveries enable row level security;
alter table webhook_deliveries force row level security;
create policy tenant_isolation on webhook_deliveries
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

alter table webhook_attempts enable row level security;
alter table webhook_attempts force row level security;
create policy tenant_isolation on webhook_attempts
    using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
    with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid);

grant select, insert, update, delete on webhook_subscriptions, webhook_deliveries to pmapi_app;
grant select, insert on webhook_attempts to pmapi_app;
