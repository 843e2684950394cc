package apitest

import (
	"maps"
	"testing"
)

// NewTenant is a workspace of the test's own with a key carrying scopes
// (every scope when none are given), on the package's shared app (Shared).
func NewTenant(t testing.TB, scopes ...string) *Tenant {
	t.Helper()
	return Shared(t).NewTenant(t, scopes...)
}

// TwoTenants are two fresh workspaces of the shared app, for a test that
// shows one never reaches the other's rows.
func TwoTenants(t testing.TB) (a, b *Tenant) {
	t.Helper()
	env := Shared(t)
	return env.NewTenant(t), env.NewTenant(t)
}

// WantError fails t unless r is a failure of status with error.code code.
func WantError(t testing.TB, r *Response, status int, code string) {
	t.Helper()
	if r.Status != status || r.ErrorCode() != code {
		t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.ErrorCode(), status, code, r.Raw)
	}
}

// ErrorDetails returns error.details of a failure envelope (nil when there
// is none).
func (r *Response) ErrorDetails() map[string]any {
	e, _ := r.Body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d
}

// Strings returns a decoded JSON array of strings (v is a []any of strings)
// as a []string.
func Strings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// PagesWhileRowsArrive walks the list at path page by page from query (a
// limit, filters), calling arrive after each page: rows inserted between page
// requests must not shift the pages. It fails t unless each of want is seen
// exactly once, and answers the ids in page order.
func PagesWhileRowsArrive(t testing.TB, tn *Tenant, path string, query map[string]string, want []string,
	arrive func(page int)) []string {
	t.Helper()
	seen := map[string]int{}
	var order []string
	q := maps.Clone(query)
	for page := 0; ; page++ {
		if page > 20 {
			t.Fatal("paging does not end")
		}
		r := tn.Get(t, path, q)
		for _, id := range r.IDs() {
			seen[id]++
			order = append(order, id)
		}
		arrive(page)
		next, ok := r.Data()["nextCursor"].(string)
		if !ok {
			break
		}
		q["cursor"] = next
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Errorf("%s seen %d times", id, seen[id])
		}
	}
	return order
}
