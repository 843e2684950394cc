package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/pmapi/pmapi/internal/pgcluster"
)

// runDevDB is `pmapi devdb [--citus] exec -- CMD ARGS`: one throwaway PostgreSQL
// for CMD, so every test package of a `make test` run shares one server instead
// of each starting its own. CMD sees PMAPI_DATABASE_URL as a superuser URL; with
// --citus it is the coordinator of a Citus cluster with two workers, which the
// packages find from it (`make test-citus`).
func runDevDB(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("devdb", flag.ContinueOnError)
	citus := fs.Bool("citus", false, "a Citus coordinator and two workers instead of one PostgreSQL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	args = fs.Args()
	if len(args) < 3 || args[0] != "exec" || args[1] != "--" {
		return fmt.Errorf("usage: pmapi devdb [--citus] exec -- COMMAND [ARGS...]")
	}
	srv, err := pgcluster.FromEnv(ctx, pgcluster.Options{Log: os.Stderr, Citus: *citus})
	if err != nil {
		return err
	}
	defer func() {
		if err := srv.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "devdb:", err)
		}
	}()
	cmd := exec.Command(args[2], args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "PMAPI_DATABASE_URL="+srv.AdminURL)
	if err := cmd.Start(); err != nil {
		return err
	}
	// Ctrl-C reaches the child through the terminal's process group; waiting for
	// it keeps the server up until the child has finished with it.
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exitCode(exit.ExitCode())
	}
	return err
}
