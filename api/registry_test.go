package api_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// platformTables are the tenant tables no resource registration owns, each
// with the one package whose code runs its SQL: authz's users, sessions,
// apps, keys and OAuth; api/idempotency's records; the webhook package's
// outbox of events, which the emitter in jobs and the sweeper write through it;
// the audit log and its streams (audit); the quotas (quota); tenant/usage's
// daily counts.
var platformTables = map[string]string{
	"users": "authz", "sessions": "authz", "apps": "authz", "api_keys": "authz",
	"oauth_grants": "authz", "oauth_device_codes": "authz", "oauth_refresh_tokens": "authz",
	"idempotency_keys": "idempotency", "events": "webhook",
	"audit_streams": "audit", "audit_log": "audit", "workspace_quotas": "quota",
	"usage_daily": "usage",
}

// ownerDir is the package directory of registration r: its name without
// dashes ("action-item" is resource/actionitem).
func ownerDir(r api.Resource) string { return strings.ReplaceAll(r.Name, "-", "") }

// sqlNaming lists the directories whose Go code (tests, migrations and the
// tools that seed or check databases from outside aside) names table in a
// statement: after from, into, update, join or "table".
func sqlNaming(t *testing.T, table string) []string {
	t.Helper()
	stmt := regexp.MustCompile(`(?i)\b(from|into|update|join|table)\s+(only\s+)?` + regexp.QuoteMeta(table) + `\b`)
	var dirs []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch filepath.ToSlash(path) {
			case "../migrations", "../cmd/pmbench", "../cmd/pmchaos", "../internal", "../docs", "../sdk", "../tools", "../.git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if dir := filepath.Dir(path); stmt.Match(src) && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestRegistrationsKeepTheChecklist holds docs/architecture.md's "how to add
// a resource" honest: what a registration declares must be true of the schema,
// the document and the route table, and every resource package with a handler
// file must be in the list.
func TestRegistrationsKeepTheChecklist(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	ctx := context.Background()
	pool := testdb.OwnerPool(t)
	cat := env.Server.Catalog()

	t.Run("every registered table has forced row-level security and is distributed", func(t *testing.T) {
		owned := map[string]string{}
		for _, r := range env.Server.Resources() {
			for _, table := range r.Tables {
				owned[table] = r.Name
				var enabled, forced bool
				var class string
				err := pool.QueryRow(ctx, `select c.relrowsecurity, c.relforcerowsecurity, coalesce(k.class, '')
					from pg_class c left join schema_table_classes k on k.table_name = c.relname
					where c.oid = $1::regclass`, table).Scan(&enabled, &forced, &class)
				if err != nil {
					t.Errorf("%s (of %s): %v", table, r.Name, err)
					continue
				}
				if !enabled || !forced || class != "distributed" {
					t.Errorf(
						"%s (of %s): rls enabled=%v forced=%v, class %q; want both and distributed",
						table,
						r.Name,
						enabled,
						forced,
						class,
					)
				}
			}
		}
		// And the other way round: every tenant table has an owner.
		for _, table := range testdb.TenantTables(t) {
			if owned[table] == "" && platformTables[table] == "" {
				t.Errorf("tenant table %s belongs to no registration (add it to its resource's Tables)", table)
			}
		}
	})

	t.Run("a registered table's SQL is written in its own package", func(t *testing.T) {
		for _, r := range env.Server.Resources() {
			for _, table := range r.Tables {
				for _, dir := range sqlNaming(t, table) {
					if filepath.Base(dir) != filepath.Base(ownerDir(r)) {
						t.Errorf("%s (of %s) is named in the SQL of %s; each package runs only its own tables' SQL", table, r.Name, dir)
					}
				}
			}
		}
	})

	t.Run("a platform table's SQL is written in its owner's package", func(t *testing.T) {
		for table, owner := range platformTables {
			for _, dir := range sqlNaming(t, table) {
				if filepath.Base(dir) != owner {
					t.Errorf("%s (of %s) is named in the SQL of %s; each package runs only its own tables' SQL", table, owner, dir)
				}
			}
		}
	})

	t.Run("every registered event type has a documented payload", func(t *testing.T) {
		for _, e := range cat.Events {
			name := api.WebhookPayloadSchema(env.Server.Document(), e.Name)
			if name == "" {
				t.Errorf("event %s is not in x-webhooks", e.Name)
				continue
			}
			if env.Server.Document().Components.Schemas[name] == nil {
				t.Errorf("event %s: payload schema %q is not in the document", e.Name, name)
			}
		}
	})

	t.Run("every operation's scope is a registered scope", func(t *testing.T) {
		for _, op := range env.Server.Operations() {
			if op.Scope != "" && !slices.Contains(cat.Scopes, op.Scope) {
				t.Errorf("%s needs scope %s, which no registration declares", op.ID, op.Scope)
			}
		}
	})

	t.Run("every resource package with a handler file is in the list", func(t *testing.T) {
		list, err := os.ReadFile("../resource/registry/registry.go")
		if err != nil {
			t.Fatal(err)
		}
		files, err := filepath.Glob("../resource/*/http.go")
		if err != nil || len(files) == 0 {
			t.Fatalf("no handler files found: %v", err)
		}
		for _, f := range files {
			pkg := filepath.Base(filepath.Dir(f))
			if !strings.Contains(string(list), pkg+".Resource(") {
				t.Errorf("resource/%s has a handler file but is not in resource/registry's list", pkg)
			}
		}
		if len(env.Server.Resources()) != len(files) {
			t.Errorf("%d registrations for %d handler files", len(env.Server.Resources()), len(files))
		}
	})
}
