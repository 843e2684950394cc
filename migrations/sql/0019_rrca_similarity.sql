-- Similar analyses ranked by what an analysis says of its mechanism, kept
-- current per analysis (docs/decisions/rrca.md, "Similar analyses").
--
-- rrca_analyses.similarity_version counts the changes that alter an analysis's
-- neighbours (its text, its archiving); every such change bumps it in the
-- change's transaction, which also queues the similarity job.
--
-- rrca_similarity is, per analysis, the version its neighbours were last
-- computed from and when (pending: similarity_version is ahead of it).
-- rrca_terms holds each analysis's profile (its symptom and mechanism terms,
-- each weighted by the texts it comes from), a workspace's inverted index: a
-- recomputation reads the postings of its own terms only (workspace_id and
-- term lead the index), never a row of another workspace and not the whole
-- workspace either.
--
-- rrca_similarity_locks holds one row per workspace that the similarity job
-- locks, so the workspace's recomputations run one at a time: the job writes
-- both directions of each pair, and two running side by side could each
-- overwrite the other's fresher score with one read from an older text.
--
-- rrca_suggestion_runs.suggestions keeps what a 5-why run suggested and why:
-- the node each suggestion became, its confidence and its evidence.
--
-- One change per statement in a DO block, tables placed before their keys
-- (0015). The scores computed before this migration came from the earlier
-- ranking and no profile exists yet: every analysis is marked pending and its
-- pairs are dropped; the similarity job of the analysis's next change, or
-- the maintenance job's catch-up, computes them again.
do $$
begin
    create table rrca_similarity (
        workspace_id   uuid not null,
        rrca_id        uuid not null,
        version        bigint not null,
        computed_at    timestamptz not null default now(),
        primary key (workspace_id, rrca_id)
    );
    perform pmapi_place('rrca_similarity', 'distributed');
    alter table rrca_similarity add constraint rrca_similarity_rrca_fkey
        foreign key (workspace_id, rrca_id) references rrca_analyses (workspace_id, id) on delete cascade;

    -- A term of an analysis's profile: its weight among the symptom terms
    -- and among the mechanism terms (0 where it is not one), and the norms of
    -- the whole profile, repeated on each of its rows so that the postings a
    -- recomputation reads are all it needs (the rows are rewritten together).
    create table rrca_terms (
        workspace_id uuid not null,
        rrca_id      uuid not null,
        term         text not null,
        symptom      real not null,
        mechanism    real not null,
        symptom_l2   real not null,
        symptom_l1   real not null,
        mechanism_l2 real not null,
        mechanism_l1 real not null,
        primary key (workspace_id, rrca_id, term)
    );
    perform pmapi_place('rrca_terms', 'distributed');
    alter table rrca_terms add constraint rrca_terms_rrca_fkey
        foreign key (workspace_id, rrca_id) references rrca_analyses (workspace_id, id) on delete cascade;
    create index rrca_terms_term on rrca_terms (workspace_id, term)
        include (rrca_id, symptom, mechanism, symptom_l2, symptom_l1, mechanism_l2, mechanism_l1);

    create table rrca_similarity_locks (
        workspace_id uuid primary key
    );
    perform pmapi_place('rrca_similarity_locks', 'distributed');

    -- After the new tables are placed: pmapi_place distributes a table in
    -- sequential mode, which Citus refuses after a parallel statement (an
    -- ALTER of a distributed table) in the same transaction.
    alter table rrca_analyses add column similarity_version bigint not null default 1;

    -- A 5-why run's suggestions with their evidence and confidence (a JSON
    -- array; empty for look-across runs, whose evidence is in each suggestion).
    alter table rrca_suggestion_runs add column suggestions jsonb not null default '[]';

    -- The reverse direction of a pair, for the job's delete of an analysis's
    -- pairs (both directions) by key.
    create index rrca_similar_reverse on rrca_similar (workspace_id, similar_id);

    alter table rrca_similar disable row level security;
    delete from rrca_similar;
    alter table rrca_similar enable row level security;

end $$;

do $$
declare t text;
begin
    foreach t in array array['rrca_similarity', 'rrca_terms', 'rrca_similarity_locks'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format($p$create policy tenant_isolation on %I
            using (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)
            with check (workspace_id = nullif(current_setting('pmapi.workspace_id', true), '')::uuid)$p$, t);
        execute format('grant select, insert, update, delete on %I to pmapi_app', t);
    end loop;
end $$;
