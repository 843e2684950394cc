package api

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	gojson "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/quota"
	"github.com/pmapi/pmapi/tenant"
	"github.com/pmapi/pmapi/tenant/usage"
)

// BodyLimit is the largest request body accepted (413 PAYLOAD_TOO_LARGE above).
const BodyLimit = 1 << 20

// Deps is what the HTTP core needs from the rest of the server; what the
// resources need is theirs (resource/registry).
type Deps struct {
	Directory *tenant.Directory
	// AdminToken guards /admin/v1; empty turns the admin API off (404).
	AdminToken string
	Log        *slog.Logger
	// AccessLog takes the line of every request; nil means Log. pmapi serve
	// gives it a buffered writer (observability.LineBuffer).
	AccessLog *slog.Logger
	// Ready reports whether every shard is reachable and migrated.
	Ready func(context.Context) error
	// SessionTTL is the lifetime of sessions the admin API issues by default.
	SessionTTL time.Duration
	// Auth verifies API keys and bearer tokens of resource calls.
	Auth *authz.Authenticator
	// RateLimitPerMinute is the default per-credential limit (apps may override).
	RateLimitPerMinute int
	// RateShare is how many replicas divide every key's rate limit
	// (replicas.Membership.Count); nil means this process enforces it alone.
	RateShare func() int
	// Usage counts each request of a known workspace; nil counts nothing and
	// leaves the requestsPerMonth quota unenforced (it is read from usage).
	Usage *usage.Counter
	// QuotaRefresh is how often a replica reads a workspace's requestsPerMonth
	// quota and month of requests again (quota.MonthGuard); a minute when 0.
	QuotaRefresh time.Duration
	// OAuth runs the device flow and verifies JWTs; nil leaves OAuth off.
	OAuth *authz.OAuth
	// RiverUI maps shard names to their River UI handlers, each built with the
	// prefix RiverUIPrefix + "/" + shard; empty leaves River UI off.
	RiverUI map[string]http.Handler
	// ReadTimeout bounds how long a request may take to arrive (30 s when 0).
	ReadTimeout time.Duration
	// Placer runs the Citus placement verbs (isolate, move) as the tables'
	// owner; nil answers them 409 with details.requires = "owner-url".
	Placer *tenant.Placer
	// PublicURL is the origin every absolute URL pmapi prints starts with;
	// empty takes the request's (see baseURL).
	PublicURL string
	// TrustedProxies are the CIDRs whose Forwarded and X-Forwarded-* headers
	// count; none by default.
	TrustedProxies []string
}

// Server holds the dependencies every handler uses.
type Server struct {
	Deps
	doc       *openapi3.T
	docJSON   []byte
	ops       []Operation
	resources []Resource
	catalog   Catalog
	limiter   *rateLimiter
	months    *quota.MonthGuard // nil without Usage
	guesses   *codeGuesses
}

// New builds the Fiber app and its OpenAPI document from the platform's
// operations and those of resources, in two phases: every registration is
// gathered into the Catalog first, then each resource builds its operations
// with it.
func New(d Deps, resources []Resource) (*fiber.App, *Server, error) {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.SessionTTL == 0 {
		d.SessionTTL = 30 * 24 * time.Hour
	}
	if d.RateLimitPerMinute <= 0 {
		d.RateLimitPerMinute = 600
	}
	if d.Auth == nil && d.Directory != nil {
		d.Auth = authz.NewAuthenticator(d.Directory)
	}
	s := &Server{
		Deps:      d,
		resources: resources,
		limiter:   newRateLimiter(d.RateLimitPerMinute, d.RateShare),
		guesses:   &codeGuesses{fails: map[string][]time.Time{}},
	}
	if d.Usage != nil {
		s.months = quota.NewMonthGuard(d.Usage.MonthRequests, cmp.Or(d.QuotaRefresh, time.Minute))
	}
	if d.OAuth != nil && d.Auth != nil {
		d.Auth.Bearer = d.OAuth
	}
	var err error
	if s.catalog, err = catalogOf(resources); err != nil {
		return nil, nil, err
	}
	s.ops = s.operations()
	if err := s.catalog.checkScopes(s.ops); err != nil {
		return nil, nil, err
	}
	for _, op := range s.ops {
		if err := checkQuery(op); err != nil {
			return nil, nil, err
		}
	}
	if err := authz.DefineScopes(s.catalog.Scopes...); err != nil {
		return nil, nil, err
	}
	doc, err := BuildDocument(s.ops, s.catalog)
	if err != nil {
		return nil, nil, err
	}
	if s.docJSON, err = json.Marshal(doc); err != nil {
		return nil, nil, err
	}
	s.doc = doc

	readTimeout := d.ReadTimeout
	if readTimeout <= 0 {
		readTimeout = 30 * time.Second
	}
	app := fiber.New(fiber.Config{
		AppName:               "pmapi",
		BodyLimit:             BodyLimit,
		ErrorHandler:          errorHandler(d.Log),
		DisableStartupMessage: true,
		// goccy/go-json writes what encoding/json does, byte for byte
		// (TestEncodersAgree), in about 60 % of its CPU on a 50-task page
		// (BenchmarkEncodeListPage; docs/decisions/reads.md).
		JSONEncoder:  gojson.Marshal,
		ReadTimeout:  readTimeout,
		WriteTimeout: 30 * time.Second,
		IdleTimeout:  120 * time.Second,
		// A 50-task page (about 25 KB) fits, so headers and body leave in one
		// write(2), not Fiber's default 4 KiB then the rest: about 3 µs less a
		// page (BenchmarkResponseWrite) for 28 KiB more heap per open
		// keep-alive connection (BenchmarkConnectionMemory; docs/decisions/reads.md).
		WriteBufferSize: 32 << 10,
		// Fiber believes every peer's X-Forwarded-* unless told whom to trust.
		EnableTrustedProxyCheck: true,
		TrustedProxies:          d.TrustedProxies,
	})
	guardRequests(app)
	app.Use(
		withRequestID,
		accessLog(cmp.Or(d.AccessLog, d.Log), d.Usage),
		recoverPanics(d.Log),
		saneQuery,
		func(c *fiber.Ctx) error {
			c.Locals(localLog, d.Log)
			return c.Next()
		},
	)
	for _, op := range s.ops {
		handlers := s.authFor(op)
		if op.Revalidates() {
			handlers = append(handlers, revalidate)
		}
		if op.IfMatch {
			handlers = append(handlers, requireMatch)
		}
		switch {
		case op.Idempotent:
			handlers = append(handlers, s.idempotent(op.SecretField))
		case op.Method == http.MethodPost:
			handlers = append(handlers, refuseIdempotencyKey(op))
		}
		handlers = append(handlers, op.Handler)
		app.Add(op.Method, op.fiberPath(), handlers...)
	}
	s.mountRiverUI(app)
	return app, s, nil
}

// Document returns the OpenAPI document the app serves.
func (s *Server) Document() *openapi3.T { return s.doc }

// Operations returns every declared operation.
func (s *Server) Operations() []Operation { return s.ops }

// Resources returns the registrations the server was built from.
func (s *Server) Resources() []Resource { return s.resources }

// Catalog returns what the registrations declare, gathered.
func (s *Server) Catalog() Catalog { return s.catalog }

// operations is the one list of routes: the platform's, then each resource's.
func (s *Server) operations() []Operation {
	var ops []Operation
	ops = append(ops, s.metaOperations()...)
	ops = append(ops, s.adminOperations()...)
	ops = append(ops, s.adminPlacementOperations()...)
	ops = append(ops, s.adminLifecycleOperations()...)
	ops = append(ops, s.adminQuotaOperations()...)
	ops = append(ops, s.auditOperations()...)
	ops = append(ops, s.adminUsageOperation())
	ops = append(ops, s.sessionOperations()...)
	ops = append(ops, s.appOperations()...)
	ops = append(ops, s.keyOperations()...)
	ops = append(ops, s.meOperations()...)
	ops = append(ops, s.eventTypeOperations()...)
	for _, r := range s.resources {
		if r.Operations != nil {
			for _, op := range r.Operations(s.catalog) {
				if s.catalog.TagDocs == nil {
					s.catalog.TagDocs = map[string]string{}
				}
				if r.TagDoc != "" {
					s.catalog.TagDocs[op.Tag] = r.TagDoc
				}
				ops = append(ops, op)
			}
		}
	}
	ops = append(ops, s.oauthOperations()...)
	for i := range ops {
		// Every POST a caller's own credentials make is safe to retry, not
		// only the creates: a retried suggest, apply, rotation or update
		// gets the first answer rather than doing the work twice.
		if ops[i].Method == http.MethodPost && (ops[i].Auth == AuthKey || ops[i].Auth == AuthSession) {
			ops[i].Idempotent = true
		}
	}
	return ops
}
