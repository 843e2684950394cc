package pgcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// stopLeftover deals with what a killed pmapi leaves in dataDir: `make run |
// tee log` interrupted (or kill -9) ends pmapi before it stops PostgreSQL,
// which pg_ctl started in a session of its own. The directory lock, already
// held, says no live pmapi owns the cluster, so a server still running there
// is an orphan on a port this run does not know: it is stopped, and started
// again by the caller. A postmaster.pid whose process is gone needs nothing:
// PostgreSQL replaces it and recovers. The answer is one line for the log,
// empty when the last run stopped cleanly.
func stopLeftover(ctx context.Context, bin string, who runAs, dataDir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return "", nil
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	running := who.command(ctx, filepath.Join(bin, "pg_ctl"), "-D", dataDir, "status").Run() == nil
	if !running || !serves(pid, dataDir) {
		return fmt.Sprintf(
			"postgres: the last run did not stop cleanly (pid %d is gone); PostgreSQL recovers on start",
			pid,
		), nil
	}
	n := node{bin: bin, who: who, dataDir: dataDir}
	if err := n.stop(ctx); err != nil {
		return "", fmt.Errorf(
			"a PostgreSQL left running in %s by an earlier pmapi (pid %d) would not stop: %w",
			dataDir,
			pid,
			err,
		)
	}
	return fmt.Sprintf(
		"postgres: stopped the server an earlier pmapi left running (pid %d, killed before it could stop it); "+
			"starting it again",
		pid,
	), nil
}

// serves reports whether pid is a postgres of dataDir, where /proc can tell:
// pg_ctl status trusts the pid alone, and a pid reused by another cluster of
// the same user must not be stopped.
func serves(pid int, dataDir string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return pid > 0 && !fileExists("/proc/self")
	}
	return bytes.Contains(cmdline, []byte(dataDir))
}
