package sqlcheck

import (
	"strings"
	"testing"
)

var testChecker = Checker{Tenant: map[string]bool{
	"projects": true, "project_members": true, "rrca_analyses": true, "rrca_nodes": true, "corrective_actions": true,
	"action_items": true, "webhook_deliveries": true, "webhook_subscriptions": true, "api_keys": true, "apps": true,
	"events": true, "tasks": true, "oauth_grants": true, "oauth_refresh_tokens": true, "users": true, "risks": true,
}}

// The statements pmapi ran before its SQL was made to run on Citus: each must
// break the rule that describes its failure there.
var bad = []struct {
	rule, sql string
}{
	{RuleTenantKey, `select p.id, coalesce((select json_agg(m.user_id) from project_members m
		where m.workspace_id = p.workspace_id and m.project_id = p.id), '[]')
		from projects p where p.workspace_id = $1 and p.id = $2 for update`},
	{
		RuleTenantKey,
		`select a.id, (select count(*) from rrca_nodes n where n.workspace_id = a.workspace_id and n.rrca_id = a.id)::int
		from rrca_analyses a where a.workspace_id = $1 and a.id = $2 for update of a`,
	},
	{RuleTenantKey, `with docs as (
			select a.id, a.title || ' ' || coalesce((select string_agg(n.text, ' ' order by n.id)
				from rrca_nodes n
				where n.workspace_id = a.workspace_id and n.rrca_id = a.id and n.kind <> 'WHY_SUGGESTION'), '') as doc
			from rrca_analyses a where a.workspace_id = $1 and (a.archived_at is null or a.id = $2))
		select o.id, rrca_text_similarity(me.doc, o.doc) from docs o, docs me where me.id = $2 and o.id <> me.id`},
	{RuleTenantKey, `select count(*) from tasks`},
	{RuleTenantKey, `select id from tasks where workspace_id = $1 or id = $2`},
	{RuleTenantKey, `select t.id from tasks t join projects p on p.id = t.project_id where t.workspace_id = $1`},
	{RuleTenantKey, `update tasks set title = $2 where id = $1`},
	{RuleTenantKey, `delete from rrca_nodes where id = $1`},
	{
		RuleInsertValues,
		`insert into webhook_deliveries (workspace_id, id, subscription_id, client_id, event_id, event_type, data)
		select $1::uuid, * from unnest($2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::jsonb[])
		on conflict do nothing returning id`,
	},
	{
		RuleInsertValues,
		`insert into events (workspace_id, id, type, data)
		select $1::uuid, * from unnest($2::uuid[], $3::text[], $4::jsonb[])`,
	},
	{
		RuleInsertValues,
		`insert into events (workspace_id, id, type, data)
		values ($1, $2, (select type from tasks where workspace_id = $1 limit 1), '{}')`,
	},
	{
		RuleModifyOneTable,
		`update webhook_deliveries d set job_id = j.job from unnest($2::uuid[], $3::bigint[]) as j(id, job)
		where d.workspace_id = $1 and d.id = j.id`,
	},
	{RuleModifyOneTable, `update api_keys k set last_used_at = u.at
		from unnest($2::uuid[], $3::timestamptz[]) as u(id, at)
		where k.workspace_id = $1 and k.id = u.id and (k.last_used_at is null or k.last_used_at < u.at)`},
	{RuleModifyOneTable, `update webhook_deliveries d set job_id = j.job from (values ($2::uuid, $3::bigint)) as j(id, job)
		where d.workspace_id = $1 and d.id = j.id`},
	{RuleModifyOneTable, `update corrective_actions set action_item_id = null where workspace_id = $1
		and action_item_id in (select id from action_items where workspace_id = $1 and project_id = $2)`},
	{
		RuleModifyOneTable,
		`delete from tasks t using projects p where t.workspace_id = $1 and p.workspace_id = $1 and p.id = t.project_id`,
	},
	{
		RuleMutableInCase,
		`update projects set archived_at = case when $3 then now() end, updated_at = now()
		where workspace_id = $1 and id = $2`,
	},
	{RuleMutableInCase, `update tasks as t set archived_at = case when $3 then now() end, updated_at = now()
		where t.workspace_id = $1 and t.id = $2 returning t.id`},
	{RuleMutableInCase, `update apps set name = $3, description = $4, scopes = $5, status = $6,
		disabled_at = case when $6 = 'DISABLED' then coalesce(disabled_at, now()) end, updated_at = now()
		where workspace_id = $1 and client_id = $2 returning client_id`},
	{
		RuleMutableInCase,
		`update apps set status = 'DISABLED', disabled_at = coalesce(disabled_at, now()), updated_at = now()
		where workspace_id = $1 and client_id = $2`,
	},
	{
		RuleMutableInCase,
		`update oauth_grants set revoked_at = coalesce(revoked_at, now()) where workspace_id = $1 and id = $2`,
	},
	{RuleMutableInCase, `update workspaces set status = $2,
		suspended_at = case when $2 = 'SUSPENDED' then coalesce(suspended_at, now()) end where id = $1 returning id`},
	{
		RuleMutableInCase,
		`update webhook_subscriptions s set previous_secret_sealed = case when $5 > 0 then secret_sealed end,
		previous_valid_until = case when $5 > 0 then now() + make_interval(secs => $5) end,
		secret_sealed = $3, secret_prefix = $4, updated_at = now()
		where s.workspace_id = $1 and s.client_id = $6 and s.id = $2 returning s.id`,
	},
	{RuleMutableInCase, `update webhook_deliveries set status = $3, attempts = $4, last_status = $5, next_attempt_at = $6,
		completed_at = case when $3 in ('SUCCEEDED', 'DEAD') then now() end
		where workspace_id = $1 and id = $2 and status not in ('CANCELLED', 'SUCCEEDED', 'DEAD')`},
	{RuleMutableInCase, `update webhook_subscriptions set failing_since = coalesce(failing_since, now())
		where workspace_id = $1 and id = $2 returning failing_since`},
	{
		RuleMutableInCase,
		`update webhook_subscriptions set failing_since = coalesce(failing_since, current_timestamp)
		where workspace_id = $1 and id = $2`,
	},
	{RuleMutableInCase, `insert into apps (workspace_id, client_id) values ($1, $2)
		on conflict (workspace_id, client_id) do update set disabled_at = coalesce(apps.disabled_at, now())`},
	{
		RuleStableWithColumn,
		`update webhook_subscriptions set failing_since = least(failing_since, now()) + interval '1 second'
		where workspace_id = $1 and id = $2`,
	},
	{
		RuleStableWithColumn,
		`update api_keys set expires_at = expires_at + interval '30 days' where workspace_id = $1 and id = $2`,
	},
	{
		RuleStableWithColumn,
		`update api_keys set expires_at = date_trunc('day', last_used_at, now()::text) where workspace_id = $1 and id = $2`,
	},
	{RuleSetConfig, `select set_config('pg_trgm.word_similarity_threshold', $1, true)`},
	{RuleSetConfig, `select set_config($1, $2, true)`},
	{RuleParse, `select 'unterminated from tasks`},
}

// Statements of the shapes the rules allow.
var good = []string{
	`select p.id, coalesce((select json_agg(m.user_id) from project_members m
		where m.workspace_id = $1 and m.project_id = p.id), '[]')
		from projects p where p.workspace_id = $1 and p.id = $2 for update`,
	`select a.id from rrca_similar s join rrca_analyses a on a.workspace_id = s.workspace_id and a.id = s.similar_id
		where s.workspace_id = $1 and s.rrca_id = $2 and a.archived_at is null order by s.score desc, a.id limit $3`,
	`select c.id, i.status from corrective_actions c
		left join action_items i on i.workspace_id = c.workspace_id and i.id = c.action_item_id
		where c.workspace_id = $1 and c.rrca_id = $2 order by c.id`,
	`select r.grant_id from oauth_refresh_tokens r
		join oauth_grants g on g.workspace_id = r.workspace_id and g.id = r.grant_id
		where r.workspace_id = $1 and r.token_hash = $2 and g.client_id = $3 for update of r`,
	`with recursive sub as (
		select id from rrca_nodes where workspace_id = $1 and id = $2
		union all
		select n.id from rrca_nodes n join sub on n.parent_id = sub.id where n.workspace_id = $1
	) select id from sub order by id`,
	`select exists(select 1 from apps where workspace_id = $1 and client_id = $2 and status = 'ACTIVE')`,
	`select id from tasks where workspace_id = $1::uuid and (status = 'DONE' or status = 'TODO')`,
	`select id from tasks where $1 = workspace_id`,
	`select p.id, i.id from projects p join tasks i on p.workspace_id = $1 and p.id = i.project_id
		where i.workspace_id = $1`,
	`select count(*), min(scheduled_at) from river.river_job where kind = 'webhook.deliver'`,
	`select kind from client_directory c join workspaces w on w.id = c.workspace_id where c.client_id = $1`,
	`insert into events (workspace_id, id, type, data) values ($1, $2, $3, $4), ($1, $5, $6, $7)`,
	`insert into rrca_nodes as n (workspace_id, id, rrca_id) values ($1, $2, $3) returning n.id, n.kind`,
	`insert into idempotency_keys (workspace_id, client_id, key, request_hash) values ($1, $2, $3, $4)
		on conflict do nothing`,
	`insert into sessions (workspace_id, id, user_id, token_hash, expires_at)
		values ($1, $2, $3, $4, now() + make_interval(secs => $5)) returning created_at, expires_at`,
	`update webhook_deliveries d set job_id = ($3::jsonb ->> d.id::text)::bigint
		where d.workspace_id = $1 and d.id = any($2)`,
	`update projects set archived_at = now(), updated_at = now() where workspace_id = $1 and id = $2`,
	`update api_keys set previous_hash = case when $7::timestamptz is null then null else hash end,
		previous_expires_at = $7
		where workspace_id = $1 and client_id = $2 and id = $3`,
	`update webhook_subscriptions set failing_since = now() where workspace_id = $1 and id = $2 and failing_since is null`,
	`update oauth_signing_keys set retired_at = now(), publish_until = now() + make_interval(secs => $1) where kid = $2`,
	`update oauth_device_codes set interval_seconds = interval_seconds + 5, last_polled_at = $3
		where workspace_id = $1 and id = $2`,
	`delete from oauth_device_codes where workspace_id = $1 and expires_at < now() - interval '1 day'`,
	`delete from sessions where workspace_id = $1 and (expires_at < now() or revoked_at is not null)`,
	`select set_config('pmapi.workspace_id', $1, true)`,
	`set local pg_trgm.word_similarity_threshold = '0.3'`,
	`select case when k.hash = $2 then null else k.previous_expires_at end, coalesce(a.scopes, '{}')
		from api_keys k left join apps a on a.workspace_id = k.workspace_id and a.client_id = k.client_id
		where k.workspace_id = $1`,
	`select o.id from (select id from tasks where workspace_id = $1) o`,
	`-- a comment with ( in it
	 select 1 from tasks /* and ) here */ where workspace_id = $1 and title = 'it''s (fine'`,
}

func TestBadStatementsBreakTheirRule(t *testing.T) {
	for _, b := range bad {
		vs := testChecker.Check(b.sql)
		found := false
		for _, v := range vs {
			found = found || v.Rule == b.rule
		}
		if !found {
			t.Errorf("%s not reported for:\n%s\ngot %v", b.rule, b.sql, vs)
		}
	}
}

func TestGoodStatementsPass(t *testing.T) {
	for _, sql := range good {
		if vs := testChecker.Check(sql); len(vs) > 0 {
			t.Errorf("%s\nreported %v", sql, vs)
		}
	}
}

// A hole (a runtime part) where the relations or conditions are leaves that
// query level unjudged; elsewhere it changes nothing.
func TestHoles(t *testing.T) {
	for _, sql := range []string{
		`select id from ` + Hole + ` where workspace_id = $1`,
		`select p.id from projects p where ` + Hole + ` order by p.id`,
		`select p.id from projects p where (p.archived_at is null or ` + Hole + `)`,
	} {
		if vs := testChecker.Check(sql); len(vs) > 0 {
			t.Errorf("%q reported %v", sql, vs)
		}
	}
	sql := `select ` + Hole + `, (select count(*) from tasks t where t.workspace_id = p.workspace_id)
		from projects p where ` + Hole
	if vs := testChecker.Check(sql); len(vs) != 1 || !strings.Contains(vs[0].Msg, "tasks t") {
		t.Errorf("a correlated subquery beside holes: %v", vs)
	}
}
