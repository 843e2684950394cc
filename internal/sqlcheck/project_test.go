package sqlcheck_test

import (
	"os"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/sqlcheck"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Run(m)) }

// exempt are violations allowed by file and rule, each with its reason. An
// entry that no longer matches fails the test, so none outlives its cause.
var exempt = map[string]string{
	// The SetConfig mode itself, for plain PostgreSQL: its parameterised name
	// is either the workspace or a LocalSetting, which SetLocal mode sends with
	// SET LOCAL instead.
	"tenant/setting.go " + sqlcheck.RuleSetConfig: "the tenant setting's SetConfig mode",
}

// TestProjectSQL runs the checker over every statement in the module's Go
// source. The tenant tables are the migrated schema's: those under row-level
// security with a workspace_id column.
func TestProjectSQL(t *testing.T) {
	stmts, err := sqlcheck.Statements("../..")
	if err != nil {
		t.Fatal(err)
	}
	// A floor against an extractor that silently stops finding statements.
	if len(stmts) < 200 {
		t.Fatalf("found %d statements; expected the module's 200 and more", len(stmts))
	}
	c := sqlcheck.Checker{Tenant: TenantTables(t)}
	used := map[string]bool{}
	for _, s := range stmts {
		for _, v := range c.Check(s.SQL) {
			key := s.Pos[:strings.LastIndex(s.Pos, ":")] + " " + v.Rule
			if _, ok := exempt[key]; ok {
				used[key] = true
				continue
			}
			t.Errorf(
				"%s: %s\n\t%s",
				s.Pos,
				v,
				strings.Join(strings.Fields(strings.ReplaceAll(s.SQL, sqlcheck.Hole, "<runtime>")), " "),
			)
		}
	}
	for key, why := range exempt {
		if !used[key] {
			t.Errorf("exemption %q (%s) matches nothing any more: remove it", key, why)
		}
	}
}

func TenantTables(t *testing.T) map[string]bool {
	t.Helper()
	names := testdb.TenantTables(t)
	if len(names) < 20 {
		t.Fatalf("only %d tenant tables: %v", len(names), names)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}
