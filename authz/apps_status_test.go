package authz_test

import (
	"context"
	"testing"

	"github.com/pmapi/pmapi/authz"
)

// TestAppDisabledAtKeepsTheFirstTime: disabling stamps disabled_at once; a
// PATCH or a delete of an app that stays disabled keeps the stamp, enabling
// clears it, and a delete that has to disable an active app stamps it anew.
func TestAppDisabledAtKeepsTheFirstTime(t *testing.T) {
	ctx := context.Background()
	f := setup(t)
	disabled, active, renamed := authz.AppDisabled, authz.AppActive, "renamed"

	a, err := authz.UpdateApp(ctx, f.shard, f.ws.ID, f.clientID, authz.AppPatch{Status: &disabled})
	if err != nil || a.Status != disabled || a.DisabledAt == nil {
		t.Fatalf("disable: %+v, %v", a, err)
	}
	first := *a.DisabledAt
	patch := authz.AppPatch{Name: &renamed, Status: &disabled}
	if a, err = authz.UpdateApp(ctx, f.shard, f.ws.ID, f.clientID, patch); err != nil ||
		a.DisabledAt == nil || !a.DisabledAt.Equal(first) ||
		a.Name != renamed {
		t.Errorf("a PATCH of a disabled app: %+v, %v; want disabled_at %v kept", a, err, first)
	}
	// The app's key is active, so a delete only disables.
	a, removed, err := authz.DeleteApp(ctx, f.dir, f.shard, f.ws.ID, f.clientID)
	if err != nil || removed || a.DisabledAt == nil || !a.DisabledAt.Equal(first) {
		t.Errorf("delete of a disabled app in use: %+v removed %v, %v; want disabled_at %v kept", a, removed, err, first)
	}
	if a, err = authz.UpdateApp(ctx, f.shard, f.ws.ID, f.clientID, authz.AppPatch{Status: &active}); err != nil ||
		a.DisabledAt != nil {
		t.Errorf("enable: %+v, %v", a, err)
	}
	a, removed, err = authz.DeleteApp(ctx, f.dir, f.shard, f.ws.ID, f.clientID)
	if err != nil || removed || a.Status != disabled || a.DisabledAt == nil || !a.DisabledAt.After(first) {
		t.Errorf("delete of an active app in use: %+v removed %v, %v; want it disabled now", a, removed, err)
	}
}
