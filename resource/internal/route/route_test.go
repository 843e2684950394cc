package route

import (
	"net/http"
	"testing"

	"github.com/pmapi/pmapi/api"
)

func TestOpsFillsWhatTheSetShares(t *testing.T) {
	t.Parallel()
	set := Set{Tag: "Things", Base: "/openapi/v1/resource/thing/", Read: "things:read", Write: "things:write"}
	ops := set.Ops([]api.Operation{
		{Method: http.MethodGet, Path: "list", ID: "listThings"},
		{Method: http.MethodPost, Path: "create", ID: "createThing"},
		{Method: http.MethodPatch, Path: "update", ID: "patchThing"},
		{Method: http.MethodDelete, Path: "{thingId}", ID: "deleteThing", Status: http.StatusOK},
		{Method: http.MethodGet, Path: "export", ID: "exportThings", Scope: "things:write"},
	})
	want := []struct {
		path, scope string
		status      int
	}{
		{"/openapi/v1/resource/thing/list", "things:read", http.StatusOK},
		{"/openapi/v1/resource/thing/create", "things:write", http.StatusCreated},
		{"/openapi/v1/resource/thing/update", "things:write", http.StatusCreated},
		{"/openapi/v1/resource/thing/{thingId}", "things:write", http.StatusOK},
		{"/openapi/v1/resource/thing/export", "things:write", http.StatusOK},
	}
	for i, w := range want {
		op := ops[i]
		if op.Path != w.path || op.Scope != w.scope || op.Status != w.status || op.Tag != "Things" || op.Auth != api.AuthKey {
			t.Errorf("%s: got path %q scope %q status %d tag %q auth %v; want %q %q %d \"Things\" key",
				op.ID, op.Path, op.Scope, op.Status, op.Tag, op.Auth, w.path, w.scope, w.status)
		}
	}
}

func TestForPostAndPatchAndResource(t *testing.T) {
	t.Parallel()
	set := For("thing", "things", "Things")
	r := set.Resource(api.Resource{Tables: []string{"things"}}, func(api.Catalog) []api.Operation {
		return []api.Operation{{Method: PostAndPatch, Path: "update", ID: "updateThing"}}
	})
	if r.Name != "thing" || len(r.Scopes) != 2 || r.Scopes[0] != "things:read" || r.Scopes[1] != "things:write" ||
		r.Tables[0] != "things" {
		t.Errorf("registration: name %q scopes %v tables %v; want thing, read then write, things", r.Name, r.Scopes, r.Tables)
	}
	ops := r.Operations(api.Catalog{})
	if len(ops) != 2 {
		t.Fatalf("%d operations; want the POST and the PATCH", len(ops))
	}
	for i, w := range []struct{ method, id string }{{http.MethodPost, "updateThing"}, {http.MethodPatch, "patchThing"}} {
		op := ops[i]
		if op.Method != w.method || op.ID != w.id || op.Path != "/openapi/v1/resource/thing/update" ||
			op.Scope != "things:write" ||
			op.Status != http.StatusCreated {
			t.Errorf(
				"op %d: %s %s %s scope %q status %d; want %s %s under the base, write scope, 201",
				i,
				op.Method,
				op.ID,
				op.Path,
				op.Scope,
				op.Status,
				w.method,
				w.id,
			)
		}
	}
}
