//go:build pgdocker

package pgcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ory/dockertest/v3"
	"github.com/ory/dockertest/v3/docker"
)

// postgresImage matches the server version the binaries path is tested with.
const postgresImage = "15"

// startDocker runs PostgreSQL in a container through dockertest. A persistent
// DataDir is bind-mounted so dev data survives restarts as with the binaries.
func startDocker(ctx context.Context, opts Options) (*Server, error) {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, err
	}
	if err := pool.Client.Ping(); err != nil {
		return nil, fmt.Errorf("no Docker engine: %w", err)
	}
	password, err := containerPassword(opts.DataDir)
	if err != nil {
		return nil, err
	}
	run := &dockertest.RunOptions{
		Repository: "postgres",
		Tag:        postgresImage,
		Env:        []string{"POSTGRES_PASSWORD=" + password, "POSTGRES_INITDB_ARGS=--locale=C -E UTF8"},
		Cmd:        []string{"postgres", "-c", "max_connections=400"},
		Labels:     map[string]string{"pmapi": "dev"},
	}
	if opts.DataDir != "" {
		abs, err := filepath.Abs(opts.DataDir)
		if err != nil {
			return nil, err
		}
		run.Mounts = []string{filepath.Join(abs, "data") + ":/var/lib/postgresql/data"}
	}
	res, err := pool.RunWithOptions(run, func(hc *docker.HostConfig) {
		hc.AutoRemove = true
		hc.RestartPolicy = docker.RestartPolicy{Name: "no"}
	})
	if err != nil {
		return nil, fmt.Errorf("start postgres container: %w", err)
	}
	admin := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword("postgres", password),
		Host:     res.GetHostPort("5432/tcp"),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	err = waitReady(ctx, func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	}, 90*time.Second)
	if err != nil {
		_ = pool.Purge(res)
		return nil, err
	}
	fmt.Fprintf(opts.Log, "postgres: container %s on %s\n", res.Container.Name, admin.Host)
	stop := func(context.Context) error { return pool.Purge(res) }
	return &Server{AdminURL: admin.String(), Source: "docker", stop: stop}, nil
}

// containerPassword reuses the password of a persistent data directory, whose
// cluster was initialised with it, and makes a fresh one otherwise.
func containerPassword(dataDir string) (string, error) {
	if dataDir != "" {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return "", err
		}
		return superuserPassword(dataDir, runAs{uid: -1, gid: -1})
	}
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(buf), nil
}

// waitReady polls until the server accepts connections or the deadline passes.
func waitReady(ctx context.Context, try func(context.Context) error, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		if last = try(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not ready: %w", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
