package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestEveryCreateHonoursIdempotencyKey holds the rule of docs/decisions/apps-and-keys.md
// for every POST that creates something (an operation named create..., add...
// or batch... answering 201): it accepts Idempotency-Key. A new create route
// without the flag fails here.
func TestEveryCreateHonoursIdempotencyKey(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	n := 0
	for _, op := range env.Server.Operations() {
		creates := strings.HasPrefix(op.ID, "create") || strings.HasPrefix(op.ID, "add") || strings.HasPrefix(op.ID, "batch")
		if op.Method != http.MethodPost || op.Status != http.StatusCreated || !creates {
			continue
		}
		n++
		if !op.Idempotent {
			t.Errorf("%s %s (%s) creates but ignores Idempotency-Key", op.Method, op.Path, op.ID)
		}
	}
	if n < 10 {
		t.Fatalf("only %d create operations found; the rule matches nothing", n)
	}
}

// TestIdempotencyKeyOnAChildCreate replays an execution-log append, a create
// under a path with an id: the retry returns the first entry and adds none.
func TestIdempotencyKeyOnAChildCreate(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	id := tn.Do(t, "POST", apitest.ActionItemBase+"create", map[string]any{"title": "Check torque"}).Str("id")
	send := func(body map[string]any) *apitest.Response {
		return env.Do(t, apitest.Request{Method: "POST", Path: apitest.ActionItemBase + id + "/log", Body: body,
			Header: map[string]string{"X-Client-ID": tn.ClientID, "Authorization": tn.Key, "Idempotency-Key": "log-1"}})
	}
	body := map[string]any{"kind": "NOTE", "message": "torque checked on line 4"}
	first := send(body)
	if first.Status != 201 || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s", first.Status, first.Raw)
	}
	again := send(body)
	if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || again.Str("id") != first.Str("id") {
		t.Fatalf("replay: %d %s", again.Status, again.Raw)
	}
	if n := len(tn.Get(t, apitest.ActionItemBase+id+"/logs", map[string]string{"kind": "NOTE"}).Items()); n != 1 {
		t.Errorf("%d NOTE entries after a replayed append, want 1", n)
	}
	apitest.WantError(t, send(map[string]any{"kind": "NOTE", "message": "something else"}),
		422, "IDEMPOTENCY_KEY_REUSED")
}
