package authz

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestInviteUserKeepsTheDirectoryOfPeople: an invited email finds every
// workspace that invited it, in any case; a refused invitation (a duplicate)
// adds no second entry, and an unknown email finds none.
func TestInviteUserKeepsTheDirectoryOfPeople(t *testing.T) {
	ctx := context.Background()
	dir, shard := testdb.Directory(t)
	email := "Grace." + pmapi.RandomBase62(8) + "@Example.com"
	var invited []uuid.UUID // by workspaces A and B
	for _, name := range []string{"A", "B"} {
		w := testdb.Workspace(t, dir, name, "")
		if _, err := InviteUser(ctx, dir, shard, w.ID, email, "Grace"); err != nil {
			t.Fatal(err)
		}
		invited = append(invited, w.ID)
	}
	a := invited[0]
	if _, err := InviteUser(ctx, dir, shard, a, email, "Grace"); pmapi.ErrorCode(err) != pmapi.CodeConflict {
		t.Errorf("invited twice: %v", err)
	}
	if _, err := InviteUser(ctx, dir, shard, a, "not an address", "Grace"); pmapi.ErrorCode(err) != pmapi.CodeValidation {
		t.Errorf("a bad address: %v", err)
	}
	got, err := WorkspacesOfEmail(ctx, dir, "grace."+email[6:])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, invited) {
		t.Errorf("workspaces of %s: %v, want %v", email, got, invited)
	}
	if none, err := WorkspacesOfEmail(ctx, dir, "nobody@example.com"); err != nil || len(none) != 0 {
		t.Errorf("an unknown email: %v %v", none, err)
	}
}
