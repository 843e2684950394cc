// Command pmapi is the open-platform API server: `pmapi dev` (everything in one
// process on a private database), `serve` (HTTP API), `work` (River workers),
// `migrate up|status`, `admin ...` (operator tasks) and `devdb exec` (a throwaway
// PostgreSQL, or with --citus a Citus cluster, for a command, used by `make test`
// and `make test-citus`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: pmapi <command> [flags]

commands:
  dev                 private PostgreSQL, migrations, demo seed, API and workers in one process
  serve               HTTP API only
  work                River workers only
  migrate up|status   apply or list schema migrations (pmapi's and River's)
  admin ...           operator tasks (run 'pmapi admin' for the list)
  devdb exec -- CMD   run CMD with PMAPI_DATABASE_URL pointing at a throwaway PostgreSQL
                      (devdb --citus exec: a Citus coordinator with two workers)
  key-check KEY       verify an API key's checksum offline

configuration is by environment; see README.md.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1], os.Args[2:])
	var exit exitCode
	switch {
	case errors.As(err, &exit):
		os.Exit(int(exit))
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "pmapi:", err)
		os.Exit(1)
	}
}

// exitCode lets a subcommand end the process with a status of its own (devdb exec
// passes on its child's).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func run(ctx context.Context, cmd string, args []string) error {
	switch cmd {
	case "dev":
		return runDev(ctx, args, os.Stdout)
	case "serve":
		return runServe(ctx, args, true, false)
	case "work":
		return runServe(ctx, args, false, true)
	case "migrate":
		return runMigrate(ctx, args)
	case "admin":
		return runAdmin(ctx, args, os.Stdout)
	case "devdb":
		return runDevDB(ctx, args)
	case "key-check":
		return runKeyCheck(args, os.Stdout)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
