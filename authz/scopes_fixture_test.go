package authz

import "testing"

// The resources' registrations define the scopes in a server; authz's own
// tests stand in for them with the same names in the same order.
func init() {
	if err := DefineScopes(
		"projects:read", "projects:write", "tasks:read", "tasks:write", "risks:read", "risks:write",
		"action-items:read", "action-items:write", "rrca:read", "rrca:write", "notes:read", "notes:write",
		"webhooks:read", "webhooks:write",
	); err != nil {
		panic(err)
	}
}

func TestDefineScopesKeepsBitsAndRefusesMalformedNames(t *testing.T) {
	before := Scope("notes:read")
	if err := DefineScopes("notes:read", "projects:read"); err != nil {
		t.Fatal(err)
	}
	if Scope("notes:read") != before || len(AllScopeNames()) != 14 {
		t.Errorf("defining known scopes again moved them: %v", AllScopeNames())
	}
	for _, bad := range []string{"notes", ":read", "notes:", "notes: read"} {
		if err := DefineScopes(bad); err == nil {
			t.Errorf("%q accepted as a scope", bad)
		}
	}
	if KnownScope("notes:admin") || !KnownScope("notes:write") {
		t.Error("KnownScope is wrong")
	}
}
