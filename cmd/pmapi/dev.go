package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/tenant"
)

// runDev is the embedded default: a private PostgreSQL (kept in .pmapi/ unless
// --ephemeral), migrations, a demo workspace, and API plus workers in one process.
// With --citus the database is a Citus coordinator and two workers (kept in
// .pmapi/citus/), the schema distributed by the migrations.
func runDev(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	ephemeral := fs.Bool("ephemeral", false, "throw the data away on exit")
	dataDir := fs.String("data", ".pmapi", "where persistent dev data lives")
	citus := fs.Bool("citus", false, "run on a Citus coordinator and two workers instead of one PostgreSQL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	opts := pgcluster.Options{URL: os.Getenv("PMAPI_DATABASE_URL"), Durable: true, Log: os.Stderr, Citus: *citus}
	dbName := "pmapi"
	if *ephemeral {
		dbName = "pmapi_dev_" + time.Now().UTC().Format("20060102150405")
	} else if *citus {
		opts.DataDir = filepath.Join(*dataDir, "citus")
	} else {
		opts.DataDir = filepath.Join(*dataDir, "pg")
	}
	srv, err := pgcluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		if *ephemeral && srv.Source == "url" {
			_ = pgcluster.DropDatabase(context.Background(), srv.AdminURL, dbName)
		}
		if err := srv.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "stopping postgres:", err)
		} else if srv.Source != "url" {
			fmt.Fprintln(os.Stderr, "postgres stopped")
		}
	}()
	top, err := pgcluster.Discover(ctx, srv.AdminURL)
	if err != nil {
		return err
	}
	db, err := prepareDevDatabase(ctx, srv.AdminURL, dbName)
	if err != nil {
		return err
	}
	cfg.DatabaseURL, cfg.MigrateURL, cfg.Shards = db.AppURL, db.OwnerURL, nil
	onCitus := ""
	if top.Citus {
		// set_config would stay on the coordinator, and the workers' row-level
		// security would see no workspace.
		cfg.TenantSetting = tenant.SetLocal
		onCitus = fmt.Sprintf("coordinator %s, workers %s", top.Addresses()[0], strings.Join(top.Addresses()[1:], ", "))
	}
	if os.Getenv("PMAPI_METRICS_ADDR") == "" {
		// Loopback and any free port: a dev server must not fail because 9090
		// is taken; the banner prints where metrics are.
		cfg.MetricsAddr = "127.0.0.1:0"
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = "pmadm_" + pmapi.RandomBase62(32)
	}
	if cfg.SecretKey == "" {
		if cfg.SecretKey, err = devSecretKey(*ephemeral, *dataDir); err != nil {
			return err
		}
	}
	s, err := startServer(ctx, cfg, true, true)
	if err != nil {
		return err
	}
	demo, err := seedDemo(ctx, s.dir, cfg.SessionTTL)
	if err == nil {
		err = seedContent(ctx, seeder{app: s.app, clientID: demo.AppClientID, key: demo.APIKey}, demo.UserID)
	}
	if err != nil {
		s.stop()
		return fmt.Errorf("seed: %w", err)
	}
	metricsAt := "off"
	if s.metrics != nil {
		metricsAt = "http://" + s.metrics.Addr() + "/metrics"
	}
	return s.run(ctx, *addr, func(a net.Addr) {
		if os.Getenv("PMAPI_OAUTH_ISSUER") == "" && cfg.PublicURL == "" {
			// RFC 8414: the issuer is the URL the metadata is served under, known
			// only once bound (--addr may name port 0). Set before serving starts.
			s.oauth.Issuer = "http://" + a.String()
		}
		printBanner(stdout, a.String(), cfg.AdminToken, metricsAt, onCitus, demo)
	})
}

func prepareDevDatabase(ctx context.Context, adminURL, name string) (pgcluster.Database, error) {
	if err := pgcluster.EnsureRoles(ctx, adminURL); err != nil {
		return pgcluster.Database{}, err
	}
	exists, err := pgcluster.DatabaseExists(ctx, adminURL, name)
	if err != nil {
		return pgcluster.Database{}, err
	}
	var db pgcluster.Database
	if exists {
		// A restarted Citus cluster is on new ports with new role passwords.
		if err := pgcluster.SyncNodes(ctx, adminURL, name); err != nil {
			return db, err
		}
		db, err = pgcluster.Describe(adminURL, name)
	} else {
		db, err = pgcluster.CreateDatabase(ctx, adminURL, name, "")
	}
	if err != nil {
		return db, err
	}
	return db, migrations.Up(ctx, db.OwnerURL)
}

// printBanner says what to paste; onCitus, when not empty, names the Citus
// nodes the database runs on.
func printBanner(w io.Writer, addr, adminToken, metricsAt, onCitus string, d demo) {
	base := "http://" + addr
	if onCitus != "" {
		onCitus = "\n  on Citus         " + onCitus + "\n"
	}
	fmt.Fprintf(w, `
pmapi dev is serving %[1]s (API and workers in one process; Ctrl-C stops it)
%[10]s
  workspace        %[2]s
  console client   %[3]s
  user             %[4]s
  session (sid)    %[5]s
  operator token   %[6]s
  app client id    %[7]s
  API key          %[8]s   (every scope; a new one each start)
  metrics          %[9]s

Paste these:

  curl -s %[1]s/openapi/v1/openapi.json | head -c 400; echo
  curl -s -H 'X-Client-ID: %[7]s' -H 'Authorization: %[8]s' %[1]s/openapi/v1/me
  curl -s -H 'X-Client-ID: %[3]s' --cookie 'sid=%[5]s' %[1]s/openapi/v1/apps
  curl -s -d client_id=%[7]s %[1]s/openapi/v1/oauth/device/code   (OAuth device flow; approve at %[1]s/openapi/v1/oauth/device)
  curl -s -H 'Authorization: Bearer %[6]s' %[1]s/admin/v1/workspaces

`, base, d.WorkspaceID, d.ConsoleClientID, d.Email, d.SID, adminToken, d.AppClientID, d.APIKey, metricsAt, onCitus)
}

// devSecretKey keeps the dev server's sealing key beside its data, so sealed
// webhook secrets still open after a restart; an ephemeral run makes a new one.
func devSecretKey(ephemeral bool, dataDir string) (string, error) {
	if ephemeral {
		return seal.Random(), nil
	}
	path := filepath.Join(dataDir, "secret.key")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	key := seal.Random()
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", err
	}
	return key, os.WriteFile(path, []byte(key+"\n"), 0o600)
}
