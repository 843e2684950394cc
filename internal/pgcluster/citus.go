package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ErrNoCitus is returned by a Citus start when the server binaries lack the
// extension. Debian carries no Citus package, hence the script first.
var ErrNoCitus = errors.New("the Citus extension is not installed for these PostgreSQL binaries: " +
	"run ../shared/citus/install.sh as root (it builds Citus 13.2 from the source archive beside it, about 5 minutes), " +
	"or install Citus's own packages (Debian/Ubuntu: postgresql-15-citus-13.2 from Citus's package repository)")

// citusNodeNames are the data directories of a launched cluster under its base,
// the coordinator first.
var citusNodeNames = []string{"coordinator", "worker1", "worker2"}

// citusSettings are what every node needs beyond a plain launched server: the
// extension preloaded, logical decoding for online shard moves and splits, and
// prepared transactions for Citus's two-phase commit (as many as connections).
// Background workers: Citus runs a maintenance daemon (deadlock detection, 2PC
// recovery) for every database that has the extension, a test run has dozens,
// and a move's or split's logical replication needs workers of its own; with
// PostgreSQL's 8 a split under load waits forever for an apply worker.
var citusSettings = []string{
	"-c shared_preload_libraries=citus",
	"-c wal_level=logical",
	"-c max_prepared_transactions=400",
	"-c max_worker_processes=128",
	"-c max_logical_replication_workers=16",
	"-c max_replication_slots=32",
	"-c max_wal_senders=32",
}

// citusInstalled looks where these binaries load extensions from: pg_config's
// answer when it is installed, else Debian's layout (/usr/lib/postgresql/N/lib,
// /usr/share/postgresql/N). A bin directory on PATH may hold only links there.
func citusInstalled(bin string) error {
	if real, err := filepath.EvalSymlinks(filepath.Join(bin, "pg_ctl")); err == nil {
		bin = filepath.Dir(real)
	}
	libDir := filepath.Join(filepath.Dir(bin), "lib")
	shareDir := filepath.Join("/usr/share/postgresql", filepath.Base(filepath.Dir(bin)))
	if out, err := exec.Command(filepath.Join(bin, "pg_config"), "--pkglibdir", "--sharedir").Output(); err == nil {
		if dirs := strings.Fields(string(out)); len(dirs) == 2 {
			libDir, shareDir = dirs[0], dirs[1]
		}
	}
	lib, control := filepath.Join(libDir, "citus.so"), filepath.Join(shareDir, "extension", "citus.control")
	if !fileExists(lib) || !fileExists(control) {
		return fmt.Errorf("%w (no %s or %s)", ErrNoCitus, lib, control)
	}
	return nil
}

// CitusAvailable says whether Start with Citus can launch a cluster here; the
// error says what to install.
func CitusAvailable() error {
	bin, err := findBinaries()
	if err != nil {
		return err
	}
	return citusInstalled(bin)
}

// startCitus launches a coordinator and two workers, each a private cluster in
// a directory of its own under one base, with one superuser password, and joins
// them in the coordinator's postgres database, where Discover finds them.
func startCitus(ctx context.Context, bin string, opts Options) (*Server, error) {
	if err := citusInstalled(bin); err != nil {
		return nil, err
	}
	cb, err := claimBase(opts.DataDir, "pmapi-citus-")
	if err != nil {
		return nil, err
	}
	who, base, release, password := cb.who, cb.dir, cb.release, cb.password
	nodes, err := startNodes(ctx, bin, who, base, opts.Durable)
	stop := func(ctx context.Context) error {
		defer release()
		var errs []error
		// The coordinator first: its maintenance daemon would otherwise log
		// failed connections to workers already gone.
		for _, n := range nodes {
			if n.port != 0 {
				errs = append(errs, n.stop(ctx))
			}
		}
		return errors.Join(errs...)
	}
	if err != nil {
		_ = stop(ctx)
		return nil, err
	}
	top := Topology{Citus: true, Coordinator: nodeAdminURL(password, nodes[0].port)}
	for _, n := range nodes[1:] {
		top.Workers = append(top.Workers, nodeAdminURL(password, n.port))
	}
	if err := formCluster(ctx, top); err != nil {
		_ = stop(ctx)
		return nil, fmt.Errorf("form the Citus cluster: %w", err)
	}
	fmt.Fprintf(logOrDiscard(opts.Log), "citus: coordinator %s, workers %s (data in %s)\n",
		top.Addresses()[0], strings.Join(top.Addresses()[1:], ", "), base)
	restartNode := func(ctx context.Context, addr string) error {
		for _, n := range nodes {
			if net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) == addr {
				return n.crashRestart(ctx)
			}
		}
		return fmt.Errorf("no node of this cluster listens on %s", addr)
	}
	return &Server{AdminURL: top.Coordinator, Source: "citus", stop: stop, restartNode: restartNode}, nil
}

// startNodes starts the three nodes side by side (initdb dominates a first
// start); on an error the nodes that did start are returned for stopping.
func startNodes(ctx context.Context, bin string, who runAs, base string, durable bool) ([]node, error) {
	nodes := make([]node, len(citusNodeNames))
	errs := make([]error, len(citusNodeNames))
	var wg sync.WaitGroup
	for i, name := range citusNodeNames {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nodes, err
		}
		if err := who.own(dir); err != nil {
			return nodes, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := startNode(ctx, bin, who, dir, filepath.Join(base, "superuser.password"), durable, citusSettings)
			if err != nil {
				n.port = 0
				err = fmt.Errorf("%s: %w", name, err)
			}
			nodes[i], errs[i] = n, err
		}()
	}
	wg.Wait()
	return nodes, errors.Join(errs...)
}

// formCluster puts the extension in every node's postgres database (the admin
// URL's) and joins the workers there, where Discover reads them.
func formCluster(ctx context.Context, top Topology) error {
	err := onEach(ctx, top.Nodes(), func(ctx context.Context, _ int, nodeURL string) error {
		return execOn(ctx, nodeURL, "create extension if not exists citus")
	})
	if err != nil {
		return err
	}
	return syncNodes(ctx, top, "postgres")
}

func logOrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
