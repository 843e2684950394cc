package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

func TestAuditLogIsTheSessionsWorkspaceOnly(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	mine := a.Console(t, "GET", "/openapi/v1/audit", nil)
	if mine.Status != 200 || len(mine.Items()) == 0 {
		t.Fatalf("own log: %d %s", mine.Status, mine.Raw)
	}
	theirs := b.Console(t, "GET", "/openapi/v1/audit", nil)
	if theirs.Status != 200 {
		t.Fatalf("other log: %d %s", theirs.Status, theirs.Raw)
	}
	for _, id := range mine.IDs() {
		if strings.Contains(string(theirs.Raw), id) {
			t.Errorf("workspace B's session sees A's entry %s", id)
		}
	}
	for _, leak := range []string{a.ClientID, a.UserID, a.WorkspaceID} {
		if strings.Contains(string(theirs.Raw), leak) {
			t.Errorf("workspace B's log names %s of workspace A", leak)
		}
	}
	// B's session with A's console client id is no session of A's.
	r := apitest.Shared(t).Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/audit",
		Header: map[string]string{"X-Client-ID": a.ConsoleID}, Cookies: map[string]string{"sid": b.SID}})
	if r.Status != 401 {
		t.Errorf("B's sid with A's client id: %d %s", r.Status, r.Raw)
	}
	// An API key is not a console session.
	apitest.WantError(t, a.Do(t, "GET", "/openapi/v1/audit", nil), 401, "UNAUTHENTICATED")
}

func TestAuditLogFiltersAndPages(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	for i := 0; i < 3; i++ {
		tn.NewKey(t, "tasks:read")
	}
	created := tn.Console(t, "GET", "/openapi/v1/audit?action=key.created", nil)
	if created.Status != 200 || len(created.Items()) != 4 { // NewTenant's key and three more
		t.Fatalf("action filter: %d %s", created.Status, created.Raw)
	}
	for _, e := range created.Items() {
		if e["action"] != "key.created" {
			t.Errorf("filtered page holds %v", e)
		}
	}
	first := tn.Console(t, "GET", "/openapi/v1/audit?action=key.created&limit=3", nil)
	cursor, _ := first.Data()["nextCursor"].(string)
	if len(first.Items()) != 3 || cursor == "" {
		t.Fatalf("first page: %s", first.Raw)
	}
	second := tn.Console(t, "GET", "/openapi/v1/audit?action=key.created&limit=3&cursor="+cursor, nil)
	if got := append(first.IDs(), second.IDs()...); len(second.Items()) != 1 ||
		strings.Join(got, ",") != strings.Join(created.IDs(), ",") {
		t.Errorf("two pages %v, one page %v", got, created.IDs())
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r := tn.Console(t, "GET", "/openapi/v1/audit?since="+future, nil); r.Status != 200 || len(r.Items()) != 0 {
		t.Errorf("since an hour from now: %d %s", r.Status, r.Raw)
	}
	apitest.WantError(t, tn.Console(t, "GET", "/openapi/v1/audit?action=key.exploded", nil), 400, "VALIDATION_FAILED")
	apitest.WantError(t, tn.Console(t, "GET", "/openapi/v1/audit?since=yesterday", nil), 400, "VALIDATION_FAILED")
}

// A change that is refused leaves no entry, in its workspace or another.
func TestRefusedChangesLeaveNoEntry(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	count := func(tn *apitest.Tenant) int {
		t.Helper()
		r := tn.Console(t, "GET", "/openapi/v1/audit?limit=200", nil)
		if r.Status != 200 {
			t.Fatalf("audit: %d %s", r.Status, r.Raw)
		}
		return len(r.Items())
	}
	beforeA, beforeB := count(a), count(b)
	app := a.Console(t, "POST", "/openapi/v1/apps",
		map[string]any{"workspaceId": a.WorkspaceID, "name": "narrow", "scopes": []string{"tasks:read"}}).Str("clientId")
	beforeA++
	apitest.WantError(t, a.Console(t, "POST", "/openapi/v1/apps/"+app+"/keys",
		map[string]any{"scopes": []string{"projects:write"}}), 400, "SCOPE_NOT_ALLOWED")
	apitest.WantError(t, b.Console(t, "DELETE", "/openapi/v1/apps/"+app, nil), 404, "NOT_FOUND")
	apitest.WantError(t, b.Console(t, "POST", "/openapi/v1/apps/"+app+"/secret/rotate", nil), 404, "NOT_FOUND")
	if a, b := count(a), count(b); a != beforeA || b != beforeB {
		t.Errorf("entries after refused changes: A %d (want %d), B %d (want %d)", a, beforeA, b, beforeB)
	}
}

func TestErasureIsAudited(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/admin/v1/workspaces/" + tn.WorkspaceID,
		Header: env.Admin()})
	if r.Status != 202 {
		t.Fatalf("erase: %d %s", r.Status, r.Raw)
	}
	// The shared app runs no workers: the erasure waits, its entry is there.
	entries := auditEntries(t, env, tn.WorkspaceID)
	if len(entries) == 0 || entries[0]["action"] != "workspace.erasure_started" {
		t.Fatalf("newest entry after the erasure began: %v", entries)
	}
}
