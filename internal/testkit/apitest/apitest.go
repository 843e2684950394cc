// Package apitest drives the real Fiber app against the package's test database
// and checks every response it receives against the served OpenAPI document with
// kin-openapi's validator, so a handler cannot drift from the contract unnoticed.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/resource/registry"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// Env is one app over the package's database.
type Env struct {
	App        *fiber.App
	Server     *api.Server
	Directory  *tenant.Directory
	Auth       *authz.Authenticator
	AdminToken string
	// Box seals webhook secrets; workers started by StartWorkers share it.
	Box *seal.Box
	// Sender is what deliveries go through (set it with the options of New to
	// reach a test receiver).
	Sender *webhook.Sender
	Logs   *SafeBuffer
	router routers.Router
}

// SafeBuffer collects log output from concurrent requests.
type SafeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SafeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *SafeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Config is what a test may change before the app is built: the core's
// dependencies and the resources'.
type Config struct {
	CoreDeps
	ResourceDeps
}

// CoreDeps and ResourceDeps name the two halves of Config.
type (
	CoreDeps     = api.Deps
	ResourceDeps = registry.Deps
)

// New builds the app over the test database, as the server's role, from the
// same resource list the server uses.
func New(t testing.TB, mutate ...func(*Config)) *Env {
	t.Helper()
	return newOnPool(t, testdb.AppPool(t), true, mutate...)
}

// NewOnPool is New over a pool of the caller's (one connected as the server's
// role to the package's database), for tests that watch the connections. On
// Citus its transactions all go through that pool (the coordinator), as with
// PMAPI_CITUS_ROUTING=false.
func NewOnPool(t testing.TB, pool *pgxpool.Pool, mutate ...func(*Config)) *Env {
	t.Helper()
	return newOnPool(t, pool, false, mutate...)
}

// NewRoutedOnPool is NewOnPool with, on Citus, each workspace's transactions
// sent to the node that holds it, over node pools of the env's own.
func NewRoutedOnPool(t testing.TB, pool *pgxpool.Pool, mutate ...func(*Config)) *Env {
	t.Helper()
	return newOnPool(t, pool, true, mutate...)
}

func newOnPool(t testing.TB, pool *pgxpool.Pool, route bool, mutate ...func(*Config)) *Env {
	t.Helper()
	env, stop, err := build(t, pool, route, mutate...)
	if stop != nil {
		t.Cleanup(stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	return env
}

var shared struct {
	once sync.Once
	env  *Env
	err  error
}

// Shared is one Env for the package's tests that need nothing of their own,
// built by the first that asks and kept until the package's tests are done
// (testdb.BeforeClose): each test then pays for its tenant, not for an app,
// its document and its authenticator. A test that changes the configuration,
// reads the logs, listens on a port or runs workers builds its own with New.
func Shared(t testing.TB) *Env {
	t.Helper()
	shared.once.Do(func() {
		var stop func()
		shared.env, stop, shared.err = build(t, testdb.AppPool(t), true)
		if stop != nil {
			testdb.BeforeClose(stop)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.env
}

// build makes an Env; stop, when not nil, ends what it started. With route,
// on Citus, workspaces' transactions go to their nodes as the server's do:
// the package's shard over its pool, or one of the env's own.
func build(t testing.TB, pool *pgxpool.Pool, route bool, mutate ...func(*Config)) (env *Env, stop func(), err error) {
	shard, unroute := testdb.ServerShard(t), func() {}
	if pool != testdb.AppPool(t) || !route {
		shard = tenant.NewShard("default", pool, testdb.TenantSetting(t))
		if route && testdb.OnCitus(t) {
			if err := shard.Route(context.Background(), testdb.RouteOptions()); err != nil {
				return nil, nil, err
			}
			unroute = shard.StopRouting
		}
	}
	shards, err := tenant.NewShards("default", shard)
	if err != nil {
		unroute()
		return nil, nil, err
	}
	logs := &SafeBuffer{}
	dir := tenant.NewDirectory(shards)
	auth := authz.NewAuthenticator(dir)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	stopped := make(chan struct{})
	go func() { auth.Run(ctx, func() { close(ready) }); close(stopped) }()
	stop = func() { cancel(); <-stopped; unroute() }
	<-ready
	box := deploymentBox
	clients, err := jobs.NewClients(dir, jobs.Options{Box: box})
	if err != nil {
		return nil, stop, err
	}
	ring := authz.NewKeyRing(dir.Pool(), box)
	if err := loadRing(ring); err != nil {
		return nil, stop, err
	}
	cfg := Config{
		CoreDeps: api.Deps{
			OAuth:      authz.NewOAuth(dir, ring, "pmapi-test"),
			Auth:       auth,
			Directory:  dir,
			AdminToken: "pmadm_" + pmapi.RandomBase62(32),
			Log:        slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
	}
	cfg.SecretBox, cfg.Events, cfg.RRCAJobs = box, clients, clients
	cfg.WebhookJobs, cfg.WebhookAttempt = clients, jobs.Attempt
	for _, m := range mutate {
		m(&cfg)
	}
	if cfg.WebhookSender == nil {
		if cfg.WebhookSender, err = webhook.NewSender(cfg.WebhookAllowLoopback, ""); err != nil {
			return nil, stop, err
		}
	}
	resources, err := registry.Resources(cfg.ResourceDeps)
	if err != nil {
		return nil, stop, err
	}
	app, srv, err := api.New(cfg.CoreDeps, resources)
	if err != nil {
		return nil, stop, err
	}
	router, err := gorillamux.NewRouter(srv.Document())
	if err != nil {
		return nil, stop, fmt.Errorf("router from document: %w", err)
	}
	return &Env{
		App:        app,
		Server:     srv,
		Directory:  cfg.Directory,
		Auth:       cfg.Auth,
		AdminToken: cfg.AdminToken,
		Logs:       logs,
		router:     router,
		Box:        box,
		Sender:     cfg.WebhookSender,
	}, stop, nil
}

// The verification page answers text/html, which kin-openapi cannot decode on
// its own; the document describes it as a string.
func init() {
	openapi3filter.RegisterBodyDecoder(
		"text/html",
		func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			b, err := io.ReadAll(body)
			return string(b), err
		},
	)
}

// ringLoads makes loading the OAuth keys one at a time: the first Load of the
// package makes the signing key, and two Envs of parallel tests making one
// each would retire the other's at once.
var ringLoads sync.Mutex

func loadRing(ring *authz.KeyRing) error {
	ringLoads.Lock()
	defer ringLoads.Unlock()
	return ring.Load(context.Background())
}

// deploymentBox is the PMAPI_SECRET_KEY every Env of a package shares, as the
// instances of one deployment do: the OAuth signing key sealed under it lives in
// the package's one database.
var deploymentBox = func() *seal.Box {
	b, err := seal.New(seal.Random())
	if err != nil {
		panic(err)
	}
	return b
}()

// Response is a received answer with its body decoded.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// Data returns body.data as an object.
func (r *Response) Data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}

// Str returns a string at a dotted path below data, such as "workspace.status".
func (r *Response) Str(path string) string {
	v := any(r.Data())
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// ErrorCode returns error.code of a failure envelope.
func (r *Response) ErrorCode() string {
	e, _ := r.Body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// Request describes one call.
type Request struct {
	Method  string
	Path    string
	Body    any // marshalled as JSON unless it is a string or []byte
	Header  map[string]string
	Cookies map[string]string
}

// Admin returns headers carrying the operator token.
func (e *Env) Admin() map[string]string {
	return map[string]string{"Authorization": "Bearer " + e.AdminToken}
}

// Do sends req through the app and validates the answer against the document.
func (e *Env) Do(t testing.TB, req Request) *Response {
	t.Helper()
	var body io.Reader
	var raw []byte
	switch b := req.Body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	hr := httptest.NewRequest(req.Method, req.Path, body)
	if raw != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	for k, v := range req.Cookies {
		hr.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := e.App.Test(hr, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	out := &Response{Status: resp.StatusCode, Header: resp.Header}
	out.Raw, _ = io.ReadAll(resp.Body)
	if len(out.Raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(out.Raw, &out.Body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %v\n%s", req.Method, req.Path, err, out.Raw)
		}
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("%s %s: no X-Request-Id header", req.Method, req.Path)
	}
	e.validate(t, hr, raw, out)
	return out
}

// validate checks the response against the operation the router finds, or, for a
// request no operation matches, against the error envelope schema.
func (e *Env) validate(t testing.TB, hr *http.Request, reqBody []byte, out *Response) {
	t.Helper()
	if reqBody != nil {
		hr.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	route, params, err := e.router.FindRoute(hr)
	if err != nil {
		if out.Status < 400 {
			t.Errorf("%s %s answered %d but the document has no such operation", hr.Method, hr.URL.Path, out.Status)
			return
		}
		e.validateErrorEnvelope(t, hr, out)
		return
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: hr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: out.Status,
		Header: out.Header,
		Body:   io.NopCloser(bytes.NewReader(out.Raw)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		t.Errorf("%s %s: response %d does not match the document: %v\n%s", hr.Method, hr.URL.Path, out.Status, err, out.Raw)
	}
	checkDeclaredCode(t, hr, route.Operation, out)
}

// checkDeclaredCode holds a 4xx answer to what its operation declares: the
// status among its responses and the code among that status's codes, so the
// document's error declarations stay true for every answer the suite sees.
func checkDeclaredCode(t testing.TB, hr *http.Request, op *openapi3.Operation, out *Response) {
	t.Helper()
	// 408 is fasthttp's answer to a connection idle past the read timeout,
	// before any route.
	if out.Status < 400 || out.Status >= 500 || out.Status == http.StatusRequestTimeout {
		return
	}
	codes, declared := api.DeclaredCodes(op, out.Status)
	if !declared {
		t.Errorf(
			"%s %s (%s) answered %d, which the document does not declare\n%s",
			hr.Method,
			hr.URL.Path,
			op.OperationID,
			out.Status,
			out.Raw,
		)
		return
	}
	if codes == nil {
		return // an answer of another shape (OAuth's RFC 6749 errors, HTML)
	}
	body, _ := out.Body["error"].(map[string]any)
	code, _ := body["code"].(string)
	if !slices.Contains(codes, code) {
		t.Errorf(
			"%s %s (%s) answered %d %s, which the document does not declare (it says %v)",
			hr.Method,
			hr.URL.Path,
			op.OperationID,
			out.Status,
			code,
			codes,
		)
	}
}

func (e *Env) validateErrorEnvelope(t testing.TB, hr *http.Request, out *Response) {
	t.Helper()
	schema := e.Server.Document().Components.Schemas["ErrorEnvelope"]
	if schema == nil || schema.Value == nil {
		t.Fatal("document has no ErrorEnvelope schema")
	}
	var v any
	if err := json.Unmarshal(out.Raw, &v); err != nil {
		t.Errorf("%s %s: error body is not JSON: %s", hr.Method, hr.URL.Path, out.Raw)
		return
	}
	if err := schema.Value.VisitJSON(v, openapi3.MultiErrors()); err != nil {
		t.Errorf("%s %s: error body does not match ErrorEnvelope: %v\n%s", hr.Method, hr.URL.Path, err, out.Raw)
	}
}

// Listen serves the app on a loopback port for tests that need a real socket
// (fasthttp answers some requests, such as oversized bodies, before any handler).
func (e *Env) Listen(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.App.Listener(ln) }()
	t.Cleanup(func() { _ = e.App.Shutdown() })
	return "http://" + ln.Addr().String()
}

// ValidateError checks raw against the document's error envelope schema.
func (e *Env) ValidateError(t testing.TB, raw []byte) {
	t.Helper()
	e.validateErrorEnvelope(t, httptest.NewRequest("GET", "/", nil), &Response{Raw: raw})
}

// StartWorkers runs River workers over the test database until the test ends, so
// jobs the app queues (fan-out, similarity, suggestions) are worked. An idle
// worker looks for due jobs (retries, debounced runs) every 50 ms instead of
// River's second.
func (e *Env) StartWorkers(t testing.TB, opts ...func(*jobs.Options)) {
	t.Helper()
	o := jobs.Options{
		Work:         true,
		Workers:      4,
		Box:          e.Box,
		Sender:       e.Sender,
		PollInterval: 50 * time.Millisecond,
		RRCASources:  registry.RRCASources(),
	}
	for _, f := range opts {
		f(&o)
	}
	clients, err := jobs.NewClients(e.Directory, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := clients.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = clients.Stop(ctx)
	})
}

// JobWait is how long a test waits for background work (deliveries,
// retries, suggestion runs). River moves a job scheduled for later (a retry,
// a probe) into the queue only when its scheduler runs, every 5 s (a fixed
// interval), so a chain of five retries alone can take 25 s, and a loaded
// two-core CI machine took 31 s where 30 s was allowed. A passing test stops
// waiting as soon as its condition holds.
const JobWait = 90 * time.Second

// Eventually polls check every 50 ms until it returns true or within passes.
func Eventually(t testing.TB, within time.Duration, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
