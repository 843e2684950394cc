package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Server is a PostgreSQL server on which pmapi holds superuser rights.
type Server struct {
	// AdminURL connects as a superuser; it provisions roles and databases only.
	AdminURL string
	// Source says where the server came from: "url", "binaries", "docker" or
	// "citus" (a coordinator and two workers launched from the binaries).
	Source  string
	stop    func(context.Context) error
	restart func(context.Context) error
	// restartNode crash-restarts one node of a launched Citus cluster.
	restartNode func(context.Context, string) error
}

// Stop shuts down a server that Start launched; for a given URL it does nothing.
func (s *Server) Stop(ctx context.Context) error {
	if s.stop == nil {
		return nil
	}
	return s.stop(ctx)
}

// Options shape the server Start finds or launches.
type Options struct {
	// URL, when set, is used as is (PMAPI_DATABASE_URL).
	URL string
	// DataDir keeps a launched cluster's data across runs; empty means a temporary
	// directory removed by Stop.
	DataDir string
	// Durable keeps fsync on. Tests turn it off for speed; dev data keeps it.
	Durable bool
	// Log receives the server's own output; nil discards it.
	Log io.Writer
	// Citus asks for a Citus cluster: a coordinator and two workers launched
	// from the binaries, or a URL that must be a Citus coordinator.
	Citus bool
	// Preload sets shared_preload_libraries of a single cluster launched from
	// the binaries (pmbench -statements loads pg_stat_statements); a URL's
	// server, Docker and Citus ignore it.
	Preload []string
}

// ErrNoPostgres is returned when no way to get a server exists on this machine.
var ErrNoPostgres = errors.New(
	"no PostgreSQL available: set PMAPI_DATABASE_URL to a server where pmapi may create roles and databases, " +
		"or install the PostgreSQL server binaries (Debian: apt-get install postgresql), " +
		"or start a Docker engine and build with -tags pgdocker (make adds the tag when it finds no PostgreSQL binaries)",
)

// Start returns a server following the order of preference in the package doc.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.URL != "" {
		if opts.Citus {
			top, err := Discover(ctx, opts.URL)
			if err != nil {
				return nil, err
			}
			if len(top.Workers) == 0 {
				return nil, errors.New(
					"the given database URL is not a Citus coordinator: its database has no workers in pg_dist_node",
				)
			}
		}
		return &Server{AdminURL: opts.URL, Source: "url"}, nil
	}
	if opts.Citus {
		bin, err := findBinaries()
		if err != nil {
			return nil, fmt.Errorf(
				"%w; a Citus cluster is launched from the PostgreSQL server binaries (Debian: apt-get install postgresql)",
				err,
			)
		}
		return startCitus(ctx, bin, opts)
	}
	if bin, err := findBinaries(); err == nil {
		return startLocal(ctx, bin, opts)
	}
	srv, err := startDocker(ctx, opts)
	if err == nil {
		return srv, nil
	}
	fmt.Fprintf(opts.Log, "docker: %v\n", err)
	return nil, ErrNoPostgres
}

// FromEnv is Start with the URL taken from PMAPI_DATABASE_URL.
func FromEnv(ctx context.Context, opts Options) (*Server, error) {
	if opts.URL == "" {
		opts.URL = os.Getenv("PMAPI_DATABASE_URL")
	}
	return Start(ctx, opts)
}
