package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/console"
	"github.com/pmapi/pmapi/internal/replicas"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/observability"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// config is every PMAPI_* setting; README.md documents each in one table.
type config struct {
	Addr        string
	DatabaseURL string
	MigrateURL  string
	// OwnerURL is PMAPI_MIGRATE_DATABASE_URL only when it is set: the Citus
	// placement verbs need the tables' owner and never fall back to the
	// server role.
	OwnerURL      string
	Shards        map[string]string
	MigrateShards map[string]string
	AdminToken    string
	TenantSetting tenant.SettingMode
	// CitusRouting sends each workspace's transactions to the Citus node
	// that holds it (PMAPI_CITUS_ROUTING, on by default); CitusPlanCache and
	// CitusNodes shape it.
	CitusRouting       bool
	CitusPlanCache     tenant.PlanCache
	CitusNodes         map[string]string
	LogLevel           slog.Level
	LogFormat          observability.Format
	SessionTTL         time.Duration
	ShutdownGrace      time.Duration
	RateLimitPerMinute int
	MetricsAddr        string
	SecretKey          string
	WebhookLoopback    bool
	WebhookCAFile      string
	RescueAfter        time.Duration
	JobRetention       time.Duration
	EventRetention     time.Duration
	RetrySchedule      []time.Duration
	Breaker            webhook.Breaker
	JobWorkers         int
	JobFetchCooldown   time.Duration
	OAuthIssuer        string
	OAuthAccessTTL     time.Duration
	OAuthReuseGrace    time.Duration

	// ReplicaHeartbeat is how often a serve replica renews its place in the
	// shared rate budget (PMAPI_REPLICA_HEARTBEAT).
	ReplicaHeartbeat time.Duration
	// UsageFlush is how often counted usage is written (PMAPI_USAGE_FLUSH).
	UsageFlush time.Duration

	// log and riverLog, when set, replace the logger made from LogLevel and
	// LogFormat (pmapi dev quiets some lines, observability's handlers do not).
	log, riverLog *slog.Logger
	// webhookLoopbackHTTP lets subscriptions name plain http:// loopback
	// receivers; only pmapi dev sets it.
	webhookLoopbackHTTP bool
	// poolFloor is the least size of each shard's pool: commands that run
	// workers set it for them (jobs.PoolConns); zero leaves pgx's default.
	poolFloor int32

	// PublicURL is the origin clients reach the API under; empty leaves the
	// absolute URLs pmapi prints to each request's Host (pmapi dev).
	PublicURL string
	// TrustedProxies are the CIDRs whose forwarded headers count.
	TrustedProxies []string
	// SecretKeyPrevious open values sealed under earlier keys until `pmapi
	// admin reseal` has rewritten them (docs/operations.md).
	SecretKeyPrevious []string
	// OIDC is the console's identity provider; nil leaves sign-in off.
	OIDC *console.OIDCConfig
	// dev is pmapi dev: the console's one-time sign-in link, cookies
	// without Secure.
	dev bool
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

func loadConfig() (config, error) {
	c := config{
		Addr:          env("PMAPI_ADDR", ":8080"),
		MetricsAddr:   env("PMAPI_METRICS_ADDR", ":9090"),
		SecretKey:     os.Getenv("PMAPI_SECRET_KEY"),
		WebhookCAFile: os.Getenv("PMAPI_WEBHOOK_CA_FILE"),
		DatabaseURL:   os.Getenv("PMAPI_DATABASE_URL"),
		AdminToken:    os.Getenv("PMAPI_ADMIN_TOKEN"),
	}
	for _, k := range strings.Split(os.Getenv("PMAPI_SECRET_KEY_PREVIOUS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			c.SecretKeyPrevious = append(c.SecretKeyPrevious, k)
		}
	}
	c.OwnerURL = os.Getenv("PMAPI_MIGRATE_DATABASE_URL")
	c.MigrateURL = env("PMAPI_MIGRATE_DATABASE_URL", c.DatabaseURL)
	var err error
	if c.Shards, err = parseShards(os.Getenv("PMAPI_SHARDS")); err != nil {
		return c, fmt.Errorf("PMAPI_SHARDS: %w", err)
	}
	if c.MigrateShards, err = parseShards(os.Getenv("PMAPI_MIGRATE_SHARDS")); err != nil {
		return c, fmt.Errorf("PMAPI_MIGRATE_SHARDS: %w", err)
	}
	if c.TenantSetting, err = tenant.ParseSettingMode(os.Getenv("PMAPI_TENANT_SETTING")); err != nil {
		return c, err
	}
	if c.CitusRouting, err = strconv.ParseBool(env("PMAPI_CITUS_ROUTING", "true")); err != nil {
		return c, fmt.Errorf("PMAPI_CITUS_ROUTING must be true or false")
	}
	if c.CitusPlanCache, err = tenant.ParsePlanCache(os.Getenv("PMAPI_CITUS_PLAN_CACHE")); err != nil {
		return c, err
	}
	if c.CitusNodes, err = parseNodeAddrs(os.Getenv("PMAPI_CITUS_NODES")); err != nil {
		return c, fmt.Errorf("PMAPI_CITUS_NODES: %w", err)
	}
	if c.LogLevel, err = observability.ParseLevel(os.Getenv("PMAPI_LOG_LEVEL")); err != nil {
		return c, err
	}
	if c.LogFormat, err = observability.ParseFormat(os.Getenv("PMAPI_LOG_FORMAT"), os.Stdout); err != nil {
		return c, err
	}
	if c.SessionTTL, err = time.ParseDuration(env("PMAPI_SESSION_TTL", "720h")); err != nil {
		return c, fmt.Errorf("PMAPI_SESSION_TTL: %w", err)
	}
	if c.ShutdownGrace, err = time.ParseDuration(env("PMAPI_SHUTDOWN_GRACE", "25s")); err != nil {
		return c, fmt.Errorf("PMAPI_SHUTDOWN_GRACE: %w", err)
	}
	c.RescueAfter, err = time.ParseDuration(env("PMAPI_JOB_RESCUE_AFTER", jobs.DefaultRescueAfter.String()))
	if err != nil || c.RescueAfter <= 0 {
		return c, fmt.Errorf("PMAPI_JOB_RESCUE_AFTER must be a positive duration such as %s", jobs.DefaultRescueAfter)
	}
	c.EventRetention, err = time.ParseDuration(env("PMAPI_EVENT_RETENTION", "720h"))
	if err != nil || webhook.CheckEventRetention(c.EventRetention) != nil {
		return c, fmt.Errorf("PMAPI_EVENT_RETENTION must be a duration of at least 24h, such as 720h (30 days)")
	}
	c.JobRetention, err = time.ParseDuration(env("PMAPI_JOB_RETENTION", jobs.DefaultCompletedRetention.String()))
	if err != nil || c.JobRetention <= 0 {
		return c, fmt.Errorf("PMAPI_JOB_RETENTION must be a positive duration such as 1h")
	}
	c.Breaker = webhook.DefaultBreaker
	c.Breaker.Failures, err = strconv.Atoi(env("PMAPI_WEBHOOK_CIRCUIT_FAILURES", strconv.Itoa(c.Breaker.Failures)))
	if err != nil || c.Breaker.Failures < 1 || c.Breaker.Failures > 1000 {
		return c, fmt.Errorf("PMAPI_WEBHOOK_CIRCUIT_FAILURES must be a whole number from 1 to 1000")
	}
	c.Breaker.Cooldown, err = time.ParseDuration(env("PMAPI_WEBHOOK_CIRCUIT_COOLDOWN", c.Breaker.Cooldown.String()))
	if err != nil || c.Breaker.Cooldown <= 0 || c.Breaker.Cooldown > c.Breaker.MaxCooldown {
		return c, fmt.Errorf(
			"PMAPI_WEBHOOK_CIRCUIT_COOLDOWN must be a positive duration of at most %s, such as 1m",
			c.Breaker.MaxCooldown,
		)
	}
	if c.JobWorkers, err = strconv.Atoi(env("PMAPI_JOB_WORKERS", "20")); err != nil || c.JobWorkers < 1 ||
		c.JobWorkers > 10000 {
		return c, fmt.Errorf("PMAPI_JOB_WORKERS must be a whole number from 1 to 10000")
	}
	c.JobFetchCooldown, err = time.ParseDuration(env("PMAPI_JOB_FETCH_COOLDOWN", jobs.DefaultFetchCooldown.String()))
	if err != nil || c.JobFetchCooldown < time.Millisecond {
		return c, fmt.Errorf("PMAPI_JOB_FETCH_COOLDOWN must be a duration of at least 1ms, such as 10ms")
	}
	if c.PublicURL, err = parsePublicURL(os.Getenv("PMAPI_PUBLIC_URL")); err != nil {
		return c, err
	}
	if c.TrustedProxies, err = parseTrustedProxies(os.Getenv("PMAPI_TRUSTED_PROXIES")); err != nil {
		return c, err
	}
	// RFC 8414 section 3.3: the issuer is the URL the metadata is served
	// under, which the public URL is. "pmapi" stays for deployments that set
	// neither.
	c.OAuthIssuer = env("PMAPI_OAUTH_ISSUER", cmp.Or(c.PublicURL, "pmapi"))
	if c.OAuthAccessTTL, err = time.ParseDuration(env("PMAPI_OAUTH_ACCESS_TTL", "15m")); err != nil ||
		c.OAuthAccessTTL <= 0 {
		return c, fmt.Errorf("PMAPI_OAUTH_ACCESS_TTL must be a positive duration")
	}
	if c.OAuthReuseGrace, err = time.ParseDuration(env("PMAPI_OAUTH_REUSE_GRACE", "30s")); err != nil ||
		c.OAuthReuseGrace < 0 {
		return c, fmt.Errorf("PMAPI_OAUTH_REUSE_GRACE must be a duration")
	}
	if raw := os.Getenv("PMAPI_WEBHOOK_RETRY_SCHEDULE"); raw != "" {
		for _, part := range strings.Split(raw, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(part))
			if err != nil || d <= 0 {
				return c, fmt.Errorf(
					"PMAPI_WEBHOOK_RETRY_SCHEDULE must be positive durations separated by commas, like 1m,5m,30m,2h,12h",
				)
			}
			c.RetrySchedule = append(c.RetrySchedule, d)
		}
	}
	if raw := os.Getenv("PMAPI_WEBHOOK_ALLOW_LOOPBACK"); raw != "" {
		if c.WebhookLoopback, err = strconv.ParseBool(raw); err != nil {
			return c, fmt.Errorf("PMAPI_WEBHOOK_ALLOW_LOOPBACK must be true or false")
		}
	}
	if c.OIDC, err = oidcConfig(); err != nil {
		return c, err
	}
	if c.RateLimitPerMinute, err = strconv.Atoi(env("PMAPI_RATE_LIMIT_PER_MINUTE", "600")); err != nil ||
		c.RateLimitPerMinute < 1 {
		return c, fmt.Errorf("PMAPI_RATE_LIMIT_PER_MINUTE must be a positive integer")
	}
	c.ReplicaHeartbeat, err = time.ParseDuration(env("PMAPI_REPLICA_HEARTBEAT", replicas.DefaultHeartbeat.String()))
	if err != nil || c.ReplicaHeartbeat < 100*time.Millisecond || c.ReplicaHeartbeat > time.Minute {
		return c, fmt.Errorf("PMAPI_REPLICA_HEARTBEAT must be a duration from 100ms to 1m")
	}
	if c.UsageFlush, err = time.ParseDuration(env("PMAPI_USAGE_FLUSH", "1m")); err != nil ||
		c.UsageFlush < time.Second || c.UsageFlush > time.Hour {
		return c, fmt.Errorf("PMAPI_USAGE_FLUSH must be a duration from 1s to 1h")
	}
	return c, nil
}

// parseShards reads "name=url,name=url". The default shard is PMAPI_DATABASE_URL
// and is not listed here.
func parseShards(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, url, ok := strings.Cut(part, "=")
		if !ok || name == "" || url == "" || name == "default" {
			return nil, fmt.Errorf("want name=url pairs (not 'default'), got %q", part)
		}
		out[name] = url
	}
	return out, nil
}

// parseNodeAddrs reads "host:port=host:port,...": where this process reaches
// each Citus node named (as pg_dist_node has it) on the left.
func parseNodeAddrs(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, addr, ok := strings.Cut(part, "=")
		_, _, nameErr := net.SplitHostPort(name)
		_, _, addrErr := net.SplitHostPort(addr)
		if !ok || nameErr != nil || addrErr != nil {
			return nil, fmt.Errorf("want host:port=host:port pairs, got %q", part)
		}
		out[name] = addr
	}
	return out, nil
}

// openShards connects to the default shard and any others as the server's
// role; a shard that is a Citus cluster is routed (tenant.Shard.Route) unless
// PMAPI_CITUS_ROUTING is false.
func openShards(ctx context.Context, c config) (*tenant.Shards, error) {
	if c.DatabaseURL == "" {
		return nil, fmt.Errorf("PMAPI_DATABASE_URL is required (the server role's URL of the default shard)")
	}
	urls := map[string]string{"default": c.DatabaseURL}
	for k, v := range c.Shards {
		urls[k] = v
	}
	var shards []*tenant.Shard
	for name, url := range urls {
		pool, err := connect(ctx, url, c.poolFloor)
		if err != nil {
			for _, s := range shards {
				s.Pool.Close()
			}
			return nil, fmt.Errorf("shard %s: %w", name, err)
		}
		shard := tenant.NewShard(name, pool, c.TenantSetting)
		shards = append(shards, shard)
		if !c.CitusRouting {
			continue
		}
		err = shard.Route(ctx, tenant.RouteOptions{NodeAddrs: c.CitusNodes, PlanCache: c.CitusPlanCache})
		if err != nil {
			for _, s := range shards {
				s.StopRouting()
				s.Pool.Close()
			}
			return nil, fmt.Errorf("route shard %s to its Citus nodes: %w", name, err)
		}
	}
	return tenant.NewShards("default", shards...)
}

// openPlacer connects as the owner role to each shard with an owner URL, for
// the workspace isolate and move verbs; without PMAPI_MIGRATE_DATABASE_URL it
// returns nil and the verbs say what to set. The pools are small and lazy: the
// verbs are rare operator calls.
func openPlacer(ctx context.Context, c config) (*tenant.Placer, error) {
	if c.OwnerURL == "" {
		return nil, nil
	}
	urls := map[string]string{"default": c.OwnerURL}
	for k, v := range c.MigrateShards {
		urls[k] = v
	}
	owners := map[string]*pgxpool.Pool{}
	for name, url := range urls {
		cfg, err := tenant.PoolConfig(url)
		if err != nil {
			tenant.NewPlacer(owners).Close()
			return nil, fmt.Errorf("owner URL of shard %s: %w", name, err)
		}
		cfg.MaxConns, cfg.MinConns = 2, 0
		if owners[name], err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			tenant.NewPlacer(owners).Close()
			return nil, fmt.Errorf("owner URL of shard %s: %w", name, err)
		}
	}
	return tenant.NewPlacer(owners), nil
}

// accessLogInterval is how long an access line may wait in the buffer
// (observability.LineBuffer): what a crash can lose.
const accessLogInterval = 100 * time.Millisecond

// newLoggers makes the process's logger and the access log's, which writes
// to the same place through a buffer; flush writes what waits there.
func newLoggers(c config) (log, access *slog.Logger, flush func()) {
	if c.log != nil {
		return c.log, c.log, func() {}
	}
	lines := observability.NewLineBuffer(os.Stdout, accessLogInterval)
	return observability.NewLogger(
			lines,
			c.LogLevel,
			c.LogFormat,
		), observability.NewLogger(
			lines.Buffered(),
			c.LogLevel,
			c.LogFormat,
		),
		func() { _ = lines.Close() }
}
