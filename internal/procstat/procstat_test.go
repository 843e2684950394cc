package procstat

import (
	"os"
	"strconv"
	"testing"
)

// TestFieldsAreThisProcesssOwn reads this test's own line: the parent field
// is its parent's pid and its CPU time is counted; a pid that no process has
// gives nil.
func TestFieldsAreThisProcesssOwn(t *testing.T) {
	f := Fields(os.Getpid())
	if f == nil {
		t.Skip("no /proc on this machine")
	}
	if f[Parent] != strconv.Itoa(os.Getppid()) {
		t.Errorf("parent field %q, want %d", f[Parent], os.Getppid())
	}
	if s := Seconds(f, User, System); s < 0 {
		t.Errorf("CPU %v s", s)
	}
	if Fields(1<<30) != nil {
		t.Error("a pid no process has gave fields")
	}
}
