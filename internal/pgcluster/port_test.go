package pgcluster

import (
	"context"
	"net"
	"path/filepath"
	"testing"
)

// TestAPortTakenBeforeTheServerBindsItIsReplaced: when the port freePort
// found is taken by the time the server binds it (another cluster starting
// at the same moment), the node starts on another one.
func TestAPortTakenBeforeTheServerBindsItIsReplaced(t *testing.T) {
	bin := serverBinaries(t)
	ctx := context.Background()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	picks := 0
	pickPort = func() (int, error) {
		picks++
		if picks == 1 {
			return takenPort, nil
		}
		return freePort()
	}
	t.Cleanup(func() { pickPort = freePort })
	cb, err := claimBase(serverReadableTempDir(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cb.release()
	n, err := startNode(ctx, bin, cb.who, cb.dir, filepath.Join(cb.dir, "superuser.password"), false, nil)
	if err != nil {
		t.Fatalf("start with the first port taken: %v", err)
	}
	defer func() { _ = n.stop(context.Background()) }()
	if n.port == takenPort || picks != 2 {
		t.Errorf("started on %d after %d picks; want another port than %d, on the second pick", n.port, picks, takenPort)
	}
	runSQL(t, nodeAdminURL(cb.password, n.port), "select 1")
}
