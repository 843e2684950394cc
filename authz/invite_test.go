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
	a, err := dir.Create(ctx, "A", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := dir.Create(ctx, "B", "")
	if err != nil {
		t.Fatal(err)
	}
	email := "Grace." + pmapi.RandomBase62(8) + "@Example.com"
	for _, ws := range []uuid.UUID{a.ID, b.ID} {
		if _, err := InviteUser(ctx, dir, shard, ws, email, "Grace"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := InviteUser(ctx, dir, shard, a.ID, email, "Grace"); pmapi.ErrorCode(err) != pmapi.CodeConflict {
		t.Errorf("invited twice: %v", err)
	}
	if _, err := InviteUser(ctx, dir, shard, a.ID, "not an address", "Grace"); pmapi.ErrorCode(
		err,
	) != pmapi.CodeValidation {
		t.Errorf("a bad address: %v", err)
	}
	got, err := WorkspacesOfEmail(ctx, dir, "grace."+email[6:])
	if err != nil {
		t.Fatal(err)
	}
	if want := []uuid.UUID{a.ID, b.ID}; !slices.Equal(got, want) {
		t.Errorf("workspaces of %s: %v, want %v", email, got, want)
	}
	if none, err := WorkspacesOfEmail(ctx, dir, "nobody@example.com"); err != nil || len(none) != 0 {
		t.Errorf("an unknown email: %v %v", none, err)
	}
}
