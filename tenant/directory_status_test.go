package tenant_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

// TestSuspensionKeepsItsStart: suspending stamps suspended_at, suspending again
// keeps the stamp, resuming clears it and a later suspension stamps anew.
func TestSuspensionKeepsItsStart(t *testing.T) {
	ctx := context.Background()
	dir, _ := testdb.Directory(t)
	w := testdb.Workspace(t, dir, "suspended", "")
	s, err := dir.SetStatus(ctx, w.ID, tenant.StatusSuspended)
	if err != nil || s.Status != tenant.StatusSuspended || s.SuspendedAt == nil {
		t.Fatalf("suspend: %+v, %v", s, err)
	}
	first := *s.SuspendedAt
	if s, err = dir.SetStatus(ctx, w.ID, tenant.StatusSuspended); err != nil || s.SuspendedAt == nil ||
		!s.SuspendedAt.Equal(first) {
		t.Errorf("suspend again: %+v, %v; want suspended_at %v kept", s, err, first)
	}
	if s, err = dir.SetStatus(ctx, w.ID, tenant.StatusActive); err != nil || s.Status != tenant.StatusActive ||
		s.SuspendedAt != nil {
		t.Errorf("resume: %+v, %v", s, err)
	}
	if s, err = dir.SetStatus(ctx, w.ID, tenant.StatusSuspended); err != nil || s.SuspendedAt == nil ||
		!s.SuspendedAt.After(first) {
		t.Errorf("suspend after a resume: %+v, %v; want a new suspended_at", s, err)
	}
	if _, err := dir.SetStatus(ctx, uuid.New(), tenant.StatusSuspended); pmapi.ErrorCode(err) != pmapi.CodeNotFound {
		t.Errorf("an unknown workspace: %v", err)
	}
}
