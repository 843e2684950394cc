package api

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/resource/note"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// BodyLimit is the largest request body accepted (413 PAYLOAD_TOO_LARGE above).
const BodyLimit = 1 << 20

// Deps is what the HTTP layer needs from the rest of the server.
type Deps struct {
	Directory *tenant.Directory
	// AdminToken guards /admin/v1; empty turns the admin API off (404).
	AdminToken string
	Log        *slog.Logger
	// Ready reports whether every shard is reachable and migrated.
	Ready func(context.Context) error
	// SessionTTL is the lifetime of sessions the admin API issues by default.
	SessionTTL time.Duration
	// Auth verifies API keys and bearer tokens of resource calls.
	Auth *authz.Authenticator
	// RateLimitPerMinute is the default per-credential limit (apps may override).
	RateLimitPerMinute int
	// Events records change events in the changing transaction (jobs.Clients).
	Events event.Emitter
	// SecretBox seals webhook signing secrets (PMAPI_SECRET_KEY).
	SecretBox *seal.Box
	// WebhookSender sends test deliveries; nil builds the production one.
	WebhookSender *webhook.Sender
	// WebhookAllowLoopback lets subscriptions name loopback URLs (tests, dev).
	WebhookAllowLoopback bool
	// Resolver resolves webhook hosts at subscription time; nil is the system's.
	Resolver webhook.Resolver
	// OAuth runs the device flow and verifies JWTs; nil leaves OAuth off.
	OAuth *authz.OAuth
	// RRCAJobs queues similarity and suggestion work (jobs.Clients).
	RRCAJobs rrca.Jobs
	// RiverUI maps shard names to their River UI handlers, each built with the
	// prefix RiverUIPrefix + "/" + shard; empty leaves River UI off.
	RiverUI map[string]http.Handler
	// ReadTimeout bounds how long a request may take to arrive (30 s when 0).
	ReadTimeout time.Duration
	// Placer runs the Citus placement verbs (isolate, move) as the tables'
	// owner; nil answers them 409 with details.requires = "owner-url".
	Placer *tenant.Placer
}

// Server holds the dependencies every handler uses.
type Server struct {
	Deps
	doc     *openapi3.T
	docJSON []byte
	ops     []Operation
	limiter *rateLimiter

	projects    project.Store
	tasks       task.Store
	actionItems actionitem.Store
	analyses    rrca.Store
	risks       risk.Store
	notes       note.Store
	webhooks    webhook.Store
	guesses     *codeGuesses
}

// New builds the Fiber app and its OpenAPI document from one list of operations.
func New(d Deps) (*fiber.App, *Server, error) {
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
	if d.Events == nil {
		return nil, nil, errors.New("api: Deps.Events is required")
	}
	if d.RRCAJobs == nil {
		if j, ok := d.Events.(rrca.Jobs); ok {
			d.RRCAJobs = j
		} else {
			d.RRCAJobs = noJobs{}
		}
	}
	s := &Server{Deps: d, limiter: newRateLimiter(d.RateLimitPerMinute), guesses: &codeGuesses{fails: map[string][]time.Time{}}}
	if d.OAuth != nil && d.Auth != nil {
		d.Auth.Bearer = d.OAuth
	}
	s.projects = project.Store{Events: d.Events, Children: projectChildren()}
	s.actionItems = actionitem.Store{Events: d.Events}
	s.analyses = rrca.Store{Events: d.Events, Jobs: d.RRCAJobs, ActionItems: s.actionItems}
	s.tasks = task.Store{Events: d.Events}
	s.risks = risk.Store{Events: d.Events}
	s.notes = note.Store{Events: d.Events}
	if s.SecretBox == nil {
		return nil, nil, errors.New("api: Deps.SecretBox is required")
	}
	if s.Resolver == nil {
		s.Resolver = net.DefaultResolver
	}
	if s.WebhookSender == nil {
		sender, err := webhook.NewSender(s.WebhookAllowLoopback, "")
		if err != nil {
			return nil, nil, err
		}
		s.WebhookSender = sender
	}
	hookJobs, ok := d.Events.(webhook.Jobs)
	if !ok {
		hookJobs = noJobs{}
	}
	s.webhooks = webhook.Store{Events: d.Events, Jobs: hookJobs, Box: s.SecretBox}
	for _, src := range searchSources() {
		authz.Scope(src.Scope) // a misspelt scope fails here, at start-up
	}
	s.ops = s.operations()
	doc, err := BuildDocument(s.ops)
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
		ReadTimeout:           readTimeout,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           120 * time.Second,
	})
	app.Use(withRequestID, accessLog(d.Log), recoverPanics(d.Log), saneQuery)
	for _, op := range s.ops {
		handlers := s.authFor(op)
		if op.Idempotent {
			handlers = append(handlers, s.idempotent(op.SecretField))
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

// operations is the one list of routes; each resource contributes its own.
func (s *Server) operations() []Operation {
	var ops []Operation
	ops = append(ops, s.metaOperations()...)
	ops = append(ops, s.adminOperations()...)
	ops = append(ops, s.adminPlacementOperations()...)
	ops = append(ops, s.sessionOperations()...)
	ops = append(ops, s.appOperations()...)
	ops = append(ops, s.keyOperations()...)
	ops = append(ops, s.meOperations()...)
	ops = append(ops, s.eventTypeOperations()...)
	ops = append(ops, s.projectOperations()...)
	ops = append(ops, s.taskOperations()...)
	ops = append(ops, s.riskOperations()...)
	ops = append(ops, s.noteOperations()...)
	ops = append(ops, s.searchOperations()...)
	ops = append(ops, s.actionItemOperations()...)
	ops = append(ops, s.rrcaOperations()...)
	ops = append(ops, s.webhookOperations()...)
	ops = append(ops, s.oauthOperations()...)
	return ops
}

// projectChildren lists what a project delete cascades to, each with the deleted
// event it emits per row. Resources that live in projects add themselves here.
func projectChildren() []project.Child {
	return []project.Child{
		{Table: "tasks", Event: "task.deleted", IDPrefix: task.IDPrefix, IDField: "taskId"},
		{Table: "risks", Event: "risk.deleted", IDPrefix: risk.IDPrefix, IDField: "riskId"},
		{Table: "notes", Event: "note.deleted", IDPrefix: note.IDPrefix, IDField: "noteId"},
		{Table: "action_items", Event: "action-item.deleted", IDPrefix: actionitem.IDPrefix, IDField: "actionItemId", Detach: actionitem.DetachTx},
		{Table: "rrca_analyses", Event: "rrca.deleted", IDPrefix: rrca.IDPrefix, IDField: "rrcaId"},
	}
}

// noJobs queues nothing: for in-process tools (pmapi admin) that never touch
// analyses.
type noJobs struct{}

func (noJobs) Similarity(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID) error {
	return nil
}
func (noJobs) Suggest(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID) error { return nil }
func (noJobs) Deliver(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, []uuid.UUID) ([]int64, error) {
	return nil, nil
}
func (noJobs) Cancel(context.Context, pgx.Tx, *tenant.Shard, []int64) error { return nil }
