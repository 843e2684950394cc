package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/observability"
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
	// `make run | tee log` ended by Ctrl-C: tee is gone, and the first log line
	// of the shutdown would kill pmapi by SIGPIPE before it stops PostgreSQL.
	signal.Ignore(syscall.SIGPIPE)
	seeding := &atomic.Bool{}
	out := observability.NewLogger(os.Stdout, cfg.LogLevel, cfg.LogFormat).Handler()
	log := slog.New(quieter{Handler: out, seeding: seeding})
	cfg.log, cfg.riverLog = log, slog.New(quieter{Handler: out, all: true, seeding: seeding})

	opts := pgcluster.Options{URL: os.Getenv("PMAPI_DATABASE_URL"), Durable: true, Log: &lineLog{log: log}, Citus: *citus}
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
			log.Error("stopping postgres", "error", err.Error())
		} else if srv.Source != "url" {
			log.Info("postgres stopped")
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
	devDefaults(&cfg)
	var prev kept
	envFile := devEnvPath(*dataDir, *citus)
	if !*ephemeral {
		prev = readKept(envFile)
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = cmp.Or(prev.AdminToken, "pmadm_"+pmapi.RandomBase62(32))
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
	seeding.Store(true)
	d, err := seedDemo(ctx, s.dir, s.auth, cfg.SessionTTL, prev)
	if err == nil {
		err = seedContent(ctx, seeder{app: s.app, clientID: d.AppClientID, key: d.APIKey}, d.UserID)
	}
	if err != nil {
		s.stop()
		return fmt.Errorf("seed: %w", err)
	}
	settle(ctx, s.jobs.Busy)
	seeding.Store(false)
	b := banner{
		Demo:            d,
		AdminToken:      cfg.AdminToken,
		OnCitus:         onCitus,
		WebhookLoopback: cfg.WebhookLoopback,
		Metrics:         "off",
	}
	if s.metrics != nil {
		b.Metrics = "http://" + s.metrics.Addr() + "/metrics"
	}
	if !*ephemeral {
		b.DataDir, b.EnvFile = *dataDir, envFile
	}
	return s.run(ctx, *addr, func(a net.Addr) {
		if os.Getenv("PMAPI_OAUTH_ISSUER") == "" && cfg.PublicURL == "" {
			// RFC 8414: the issuer is the URL the metadata is served under, known
			// only once bound (--addr may name port 0). Set before serving starts.
			s.oauth.Issuer = "http://" + a.String()
		}
		b.Base = "http://" + a.String()
		b.ConsoleLink = s.console.DevSignInLink(b.Base, uuid.MustParse(d.WorkspaceID), uuid.MustParse(d.UserID))
		if b.EnvFile != "" {
			if err := writeDevEnv(b.EnvFile, b.exports()); err != nil {
				log.Warn("could not keep the credentials for the next start", "file", b.EnvFile, "error", err.Error())
			}
		}
		b.write(stdout)
	})
}

// devDefaults are where dev differs from serve when the environment does not
// say otherwise.
func devDefaults(cfg *config) {
	if os.Getenv("PMAPI_METRICS_ADDR") == "" {
		// Loopback and any free port: a dev server must not fail because 9090
		// is taken; the banner prints where metrics are.
		cfg.MetricsAddr = "127.0.0.1:0"
	}
	if os.Getenv("PMAPI_WEBHOOK_ALLOW_LOOPBACK") == "" {
		// A receiver on the developer's machine is how webhooks are tried
		// (docs/webhooks.md); set to false, dev refuses it as production does.
		cfg.WebhookLoopback = true
	}
	cfg.webhookLoopbackHTTP = cfg.WebhookLoopback
	cfg.dev = true
}

// settle waits (a few seconds at most) until the jobs the demo seed queued
// have run, so that their lines stay quiet and the banner comes last.
func settle(ctx context.Context, busy func(context.Context) (bool, error)) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for idle := 0; idle < 2; {
		if b, err := busy(ctx); err != nil {
			return
		} else if b {
			idle = 0
		} else {
			idle++
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
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
	if err := migrations.Up(ctx, db.OwnerURL); err != nil {
		return db, err
	}
	return db, pgcluster.MarkSearchLeakproof(ctx, adminURL, name)
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
