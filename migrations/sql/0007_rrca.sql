-- Rapid root-cause analyses (RRCA): an analysis moves forward through the 8D-like
-- phases DEFINE -> CONTAIN -> ANALYZE -> CORRECT -> VERIFY -> CLOSED, grows a tree
-- of nodes (problem, whys, causes, root causes, evidence, ...), and emits
-- corrective actions, each of which creates an action item. Similarity to other
-- analyses and the 5-why and look-across suggestions are computed by River jobs.

create table rrca_analyses (
    workspace_id      uuid not null,
    id                uuid not null,
    title             text not null check (length(title) between 1 and 300),
    problem_statement text not null default '' check (length(problem_statement) <= 20000),
    project_id        uuid,
    source_risk_id    uuid,
    phase             text not null default 'DEFINE'
                      check (phase in ('DEFINE', 'CONTAIN', 'ANALYZE', 'CORRECT', 'VERIFY', 'CLOSED')),
    created_at        timestamptz not null default now(),
    updated_at        timestamptz not null default now(),
    archived_at       timestamptz,
    primary key (workspace_id, id),
    foreign key (workspace_id, project_id) references projects (workspace_id, id) on delete cascade
);
create index rrca_analyses_project on rrca_analyses (workspace_id, project_id, id);
create index rrca_analyses_risk on rrca_analyses (workspace_id, source_risk_id, id);
create index rrca_analyses_title_trgm on rrca_analyses using gin (title gin_trgm_ops);

create table rrca_phase_history (
    workspace_id uuid not null,
    id           uuid not null,
    rrca_id      uuid not null,
    from_phase   text not null,
    to_phase     text not null,
    actor        text not null,
    at           timestamptz not null default now(),
    primary key (workspace_id, id),
    foreign key (workspace_id, rrca_id) references rrca_analyses (workspace_id, id) on delete cascade
);
create index rrca_phase_history_rrca on rrca_phase_history (workspace_id, rrca_id, id);

create table rrca_nodes (
    workspace_id      uuid not null,
    id                uuid not null,
    rrca_id           uuid not null,
    parent_id         uuid,
    kind              text not null check (kind in ('PROBLEM', 'WHY', 'CAUSE', 'ROOT_CAUSE', 'CONTRIBUTING_FACTOR',
                                                     'ESCAPE_POINT', 'EVIDENCE', 'WHY_SUGGESTION')),
    text              text not null check (length(text) between 1 and 5000),
    suggestion_run_id uuid,
    created_at        timestamptz not null default now(),
    primary key (workspace_id, id),
    foreign key (workspace_id, rrca_id) references rrca_analyses (workspace_id, id) on delete cascade,
    -- Deleting a node deletes its subtree.
    foreign key (workspace_id, parent_id) references rrca_nodes (workspace_id, id) on delete cascade
);
create index rrca_nodes_rrca on rrca_nodes (workspace_id, rrca_id, id);
create index rrca_nodes_parent on rrca_nodes (workspace_id, parent_id);

create table corrective_actions (
    workspace_id   uuid not null,
    id             uuid not null,
    rrca_id        uuid not null,
    node_id        uuid,
    action_item_id uuid,
    title          text not null,
    created_at     timestamptz not null default now(),
    primary key (workspace_id, id),
    foreign key (workspace_id, rrca_id) references rrca_analyses (workspace_id, id) on delete cascade,
    foreign key (workspace_id, node_id) references rrca_nodes (workspace_id, id) on delete set null (node_id),
    foreign key (workspace_id, action_item_id) references action_items (workspace_id, id) on delete set null (action_item_id)
);
create index corrective_actions_rrca on corrective_actions (workspace_id, rrca_id, id);

-- Each analysis's nearest other analyses, written by the similarity job.
create table rrca_similar (
    workspace_id uuid not null,
    rrca_id      uuid not null,
    similar_id   uuid not null,
    score        double precision not null,
    computed_at  timestamptz not null default now(),
    primary key (workspace_id, rrca_id, similar_id),
    foreign key (workspace_id, rrca_id) references rrca_analyses (workspace_id, id) on delete cascade,
    foreign key (workspace_id, similar_id) references rrca_analyses (workspace_id, id) on delete cascade
);

create table rrca_suggestion_runs (
    workspace_id uuid not null,
    id           uuid not null,
    rrca_id      uuid not null,
    kind         text not null check (kind in ('FIVE_WHY', 'LOOK_ACROSS')),
    status       text not null default 'PENDING' check (status in ('PENDING', 'READY', 'FAILED')),
    error        text,
    created_at   timestamptz not null default now(),
    completed_at timestamptz,
    primary key (workspace_id, id),
    foreign key (workspace_id, rrca_id) references rrca_analyses (workspace_id, id) on delete cascade
);

create table look_across_suggestions (
    workspace_id      uuid not null,
    id                uuid not null,
    rrca_id           uuid not null,
    run_id            uuid not null,
    target_project_id uuid not null,
    mechanism         text not null,
    evidence          jsonb not null,
    actions           jsonb not null,
    score             double precision not null,
    status            text not null default 'PROPOSED' check (status in ('PROPOSED', 'APPLIED', 'REJECTED')),
    reason            text,
    decided_at        timestamptz,
    created_at        timestamptz not null default now(),
    primary key (workspace_id, id),
    foreign key (workspace_id, rrca_id) references rrca_analyses (workspace_id, id) on delete cascade,
    foreign key (workspace_id, run_id) references rrca_suggestion_runs (workspace_id, id) on delete cascade,
    foreign key (workspace_id, target_project_id) references projects (workspace_id, id) on delete cascade
);
create index look_across_rrca on look_across_suggestions (workspace_id, rrca_id, id);

do $$
declare t text;
begin
    foreach t in array array['rrca_analyses', 'rrca_phase_history', 'rrca_nodes', 'corrective_actions',
                             'rrca_similar', 'rrca_suggestion_runs', 'look_across_suggestions'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format($p$create policy tenant_isolation on %I
            using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
            with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)$p$, t);
        execute format('grant select, insert, update, delete on %I to pmapi_app', t);
    end loop;
end $$;

-- How alike two texts are, 0 to 1, symmetric: mostly the overlap of their
-- English lexemes (cosine over word sets, so "leaking seals" meets "seal
-- leaks"), plus trigram similarity for spelling variants. Used to rank similar
-- analyses and to find look-across evidence.
create function rrca_text_similarity(a text, b text) returns double precision
language sql immutable parallel safe
set search_path = public, pg_catalog
as $$
    select case when ca = 0 or cb = 0 then 0
                else 0.7 * ci::float8 / sqrt(ca::float8 * cb) + 0.3 * similarity(a, b) end
    from (select cardinality(x) as ca, cardinality(y) as cb,
                 cardinality(array(select unnest(x) intersect select unnest(y))) as ci
          from (select tsvector_to_array(to_tsvector('english', a)) as x,
                       tsvector_to_array(to_tsvector('english', b)) as y) v) w
$$;
