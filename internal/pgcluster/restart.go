package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// CrashRestart stops a launched single server as a crash would (pg_ctl
// restart -m immediate: every backend killed, no checkpoint) and starts it
// again at once on the same port, so it replays its WAL before it answers:
// what the chaos suite (cmd/pmchaos) does to pmapi under load. Only a server
// launched from the binaries can be restarted.
func (s *Server) CrashRestart(ctx context.Context) error {
	if s.restart == nil {
		return errors.New("only a PostgreSQL launched from the server binaries can be restarted; unset PMAPI_DATABASE_URL")
	}
	return s.restart(ctx)
}

// CrashRestartNode is CrashRestart for one node of a Citus cluster launched
// from the binaries, named by its host:port (as pg_dist_node has it): the
// chaos suite's crash of the worker that holds its workspace.
func (s *Server) CrashRestartNode(ctx context.Context, addr string) error {
	if s.restartNode == nil {
		return errors.New("only a Citus cluster launched from the server binaries can have a node restarted")
	}
	return s.restartNode(ctx, addr)
}

// crashRestart keeps the start's options (pg_ctl reads them back from
// postmaster.opts) and its log file.
func (n node) crashRestart(ctx context.Context) error {
	cmd := n.who.command(ctx, filepath.Join(n.bin, "pg_ctl"), "-D", n.dataDir, "-m", "immediate", "-w", "-t", "120",
		"-l", filepath.Join(filepath.Dir(n.dataDir), "server.log"), "restart")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl restart: %v: %s", err, out)
	}
	return nil
}
