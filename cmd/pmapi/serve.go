package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/console"
	"github.com/pmapi/pmapi/internal/replicas"
	"github.com/pmapi/pmapi/internal/tick"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/observability"
	"github.com/pmapi/pmapi/resource/registry"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
	workspaceusage "github.com/pmapi/pmapi/tenant/usage"
)

// server is the running process: shards, directory, River clients and, when the
// API is on, the Fiber app.
type server struct {
	cfg config
	log *slog.Logger
	// flushLog writes the access lines still waiting (newLoggers).
	flushLog func()
	shards   *tenant.Shards
	dir      *tenant.Directory
	jobs     *jobs.Clients
	app      *fiber.App
	auth     *authz.Authenticator
	oauth    *authz.OAuth
	placer   *tenant.Placer
	// console serves /console on app.
	console *console.Console
	// stopAuth ends the credential cache's listener and flushes lastUsedAt.
	stopAuth func()
	metrics  *observability.MetricsServer
	// members is this replica's place in the shared rate budget (API only).
	members *replicas.Membership
	// stopBackground ends the heartbeat and the usage flushes.
	stopBackground func()
}

func startServer(ctx context.Context, cfg config, withAPI, withWork bool) (*server, error) {
	log, accessLog, flushLog := newLoggers(cfg)
	if withWork {
		cfg.poolFloor = jobs.PoolConns(cfg.JobWorkers)
	}
	shards, err := openShards(ctx, cfg)
	if err != nil {
		return nil, err
	}
	box, err := secretBox(cfg)
	if err != nil {
		shards.Close()
		return nil, err
	}
	sender, err := webhook.NewSender(cfg.WebhookLoopback, cfg.WebhookCAFile)
	if err != nil {
		shards.Close()
		return nil, err
	}
	if cfg.webhookLoopbackHTTP {
		sender.AllowLoopbackHTTP()
	}
	s := &server{cfg: cfg, log: log, flushLog: flushLog, shards: shards, dir: tenant.NewDirectory(shards)}
	log.Info("secret key", "keyId", box.KeyID(), "previousKeys", box.Keys()-1)
	var pools []observability.PoolSource
	for _, sh := range shards.All() {
		pools = append(pools, observability.PoolSource{Shard: sh.Name, Pool: sh.Pool})
		// A routed shard's node pools, as the nodes are at the start.
		for _, n := range sh.Nodes() {
			pools = append(pools, observability.PoolSource{Shard: sh.Name + "@" + n.Addr, Pool: n.Pool})
		}
	}
	observability.RegisterPools(pools)
	observability.Reregister(jobs.QueueGauges{Directory: s.dir})
	observability.RegisterReadiness(s.ready)
	if cfg.MetricsAddr != "" && cfg.MetricsAddr != "off" {
		if s.metrics, err = observability.ListenMetrics(cfg.MetricsAddr); err != nil {
			shards.Close()
			return nil, fmt.Errorf("metrics listener on %s (PMAPI_METRICS_ADDR; \"off\" disables it): %w", cfg.MetricsAddr, err)
		}
		go s.metrics.Serve(log)
		log.Info("metrics listening", "addr", s.metrics.Addr())
	}
	s.jobs, err = jobs.NewClients(s.dir, jobs.Options{
		Work:               withWork,
		Log:                log,
		RiverLog:           cfg.riverLog,
		Box:                box,
		Sender:             sender,
		RescueAfter:        cfg.RescueAfter,
		Schedule:           cfg.RetrySchedule,
		Breaker:            cfg.Breaker,
		CompletedRetention: cfg.JobRetention,
		EventRetention:     cfg.EventRetention,
		Workers:            cfg.JobWorkers,
		FetchCooldown:      cfg.JobFetchCooldown,
		Sweeps:             maintenanceSweeps(),
		RRCASources:        registry.RRCASources(),
	})
	if err != nil {
		shards.Close()
		return nil, err
	}
	if withAPI {
		s.auth = authz.NewAuthenticator(s.dir)
		ring := authz.NewKeyRing(s.dir.Pool(), box)
		if err := ring.Load(ctx); err != nil {
			shards.Close()
			return nil, fmt.Errorf("oauth signing keys: %w", err)
		}
		oauth := authz.NewOAuth(s.dir, ring, cfg.OAuthIssuer)
		oauth.AccessTTL, oauth.ReuseGrace = cfg.OAuthAccessTTL, cfg.OAuthReuseGrace
		s.oauth = oauth
		if s.placer, err = openPlacer(ctx, cfg); err != nil {
			shards.Close()
			return nil, err
		}
		authCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		var ui map[string]http.Handler
		if cfg.AdminToken != "" {
			if ui, err = riverUIHandlers(authCtx, shards, s.jobs, log); err != nil {
				cancel()
				shards.Close()
				return nil, fmt.Errorf("river ui: %w", err)
			}
		}
		var resources []api.Resource
		resources, err = registry.Resources(registry.Deps{
			Events:               s.jobs,
			RRCAJobs:             s.jobs,
			WebhookJobs:          s.jobs,
			SecretBox:            box,
			WebhookSender:        sender,
			WebhookAttempt:       jobs.Attempt,
			WebhookAllowLoopback: cfg.WebhookLoopback,
			WebhookLoopbackHTTP:  cfg.webhookLoopbackHTTP,
		})
		s.members = replicas.New(s.dir.Pool(), cfg.ReplicaHeartbeat, log)
		if err == nil {
			s.app, _, err = api.New(api.Deps{
				RiverUI:            ui,
				Directory:          s.dir,
				AdminToken:         cfg.AdminToken,
				Log:                log,
				AccessLog:          accessLog,
				Ready:              s.ready,
				SessionTTL:         cfg.SessionTTL,
				Auth:               s.auth,
				RateLimitPerMinute: cfg.RateLimitPerMinute,
				RateShare:          s.members.Count,
				Usage:              workspaceusage.Process(),
				OAuth:              oauth,
				Placer:             s.placer,
				PublicURL:          cfg.PublicURL,
				TrustedProxies:     cfg.TrustedProxies,
			}, resources)
		}
		if err == nil {
			s.console, err = console.Mount(s.app, console.Config{Directory: s.dir, SessionTTL: cfg.SessionTTL, OIDC: cfg.OIDC,
				PublicURL: cfg.PublicURL, Dev: cfg.dev, Key: consoleKey(cfg.SecretKey), Log: log})
		}
		if err != nil {
			cancel()
			shards.Close()
			return nil, err
		}
		ready, done := make(chan struct{}), make(chan struct{})
		go func() { s.auth.Run(authCtx, func() { close(ready) }); close(done) }()
		s.stopAuth = func() { cancel(); <-done }
		select {
		case <-ready:
		case <-ctx.Done():
			s.stopAuth()
			shards.Close()
			return nil, fmt.Errorf("listening for credential invalidations: %w", ctx.Err())
		}
	}
	// Jobs outlive the start-up context: a signal must lead to a graceful Stop,
	// not to cancelling running jobs mid-way.
	if err := s.jobs.Start(context.WithoutCancel(ctx)); err != nil {
		shards.Close()
		return nil, err
	}
	s.startBackground(ctx)
	return s, nil
}

// startBackground joins the replicas sharing the rate budget (a first beat
// now, so the share is right from the first request) and flushes counted
// usage every PMAPI_USAGE_FLUSH until stop.
func (s *server) startBackground(ctx context.Context) {
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if s.members != nil {
		if err := s.members.Beat(ctx); err != nil {
			s.log.Warn("joining the replicas failed; enforcing the whole rate limit here until a heartbeat succeeds",
				"cause", err.Error())
		}
		wg.Go(func() { s.members.Run(bg) })
	}
	wg.Go(func() { tick.Every(bg, s.cfg.UsageFlush, func() { s.flushUsage(bg) }) })
	s.stopBackground = func() { cancel(); wg.Wait() }
}

// flushUsage writes what this process counted; what it could not write it
// keeps for the next flush.
func (s *server) flushUsage(ctx context.Context) {
	if err := workspaceusage.Process().Flush(ctx, s.dir); err != nil {
		s.log.Warn("usage flush failed; its counts wait for the next flush", "cause", err.Error())
	}
}

// ready is /readyz: every shard answers and carries the newest migration.
func (s *server) ready(ctx context.Context) error {
	for _, sh := range s.shards.All() {
		if err := migrations.CheckCurrent(ctx, sh.Pool); err != nil {
			return fmt.Errorf("shard %s: %w", sh.Name, err)
		}
	}
	return nil
}

// run serves HTTP (when on) until ctx ends, then shuts down in order: stop
// accepting and finish in-flight requests, let running jobs finish, close pools.
func (s *server) run(ctx context.Context, addr string, onListen func(net.Addr)) error {
	errc := make(chan error, 1)
	if s.app != nil {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			s.stop()
			return err
		}
		s.log.Info("listening", "addr", ln.Addr().String())
		// After the line above: pmapi dev's banner is the last thing it prints.
		if onListen != nil {
			onListen(ln.Addr())
		}
		go func() { errc <- s.app.Listener(ln) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.log.Info("shutting down", "grace", s.cfg.ShutdownGrace.String())
	if s.app != nil {
		if serr := s.app.ShutdownWithTimeout(s.cfg.ShutdownGrace); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	s.stop()
	return err
}

func (s *server) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	if s.stopAuth != nil {
		s.stopAuth()
	}
	if s.metrics != nil {
		_ = s.metrics.Shutdown(ctx)
	}
	if err := s.jobs.Stop(ctx); err != nil {
		s.log.Error("stopping workers", "error", err.Error())
	}
	// After the requests and the jobs: nothing is counted past this flush.
	if s.stopBackground != nil {
		s.stopBackground()
		s.flushUsage(ctx)
	}
	if s.placer != nil {
		s.placer.Close()
	}
	s.shards.Close()
	s.flushLog()
}

func runServe(ctx context.Context, args []string, withAPI, withWork bool) error {
	name := "serve"
	if !withAPI {
		name = "work"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	addr := fs.String("addr", "", "listen address (default $PMAPI_ADDR or :8080)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
	}
	if withAPI && cfg.OIDC != nil && cfg.PublicURL == "" {
		return fmt.Errorf("console sign-in needs PMAPI_PUBLIC_URL: the identity provider sends people back to " +
			"PMAPI_PUBLIC_URL/console/callback, the redirect URI registered there")
	}
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := startServer(startCtx, cfg, withAPI, withWork)
	if err != nil {
		return err
	}
	if withAPI {
		s.warnUnindexedSearch(startCtx)
	}
	if withAPI && cfg.PublicURL == "" {
		s.log.Warn(
			"PMAPI_PUBLIC_URL is not set: the OAuth metadata's URLs and verification_uri follow each request's Host header; " +
				"set it to the URL clients reach the API under",
		)
	}
	return s.run(ctx, cfg.Addr, nil)
}
