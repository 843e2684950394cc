package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/rig"
	"github.com/pmapi/pmapi/tenant"
)

// world is one run: the database, the receiver, the two pmapi processes (each
// replaced when it is killed) and the workspace the load writes in.
type world struct {
	o      options
	tmp    string
	db     *rig.Database
	rcv    *receiver
	base   string
	health string
	env    []string

	mu    sync.Mutex
	serve *rig.Proc
	work  *rig.Proc

	tenant rig.Tenant
	subID  string
}

var scopes = []string{"projects:read", "projects:write", "tasks:read", "tasks:write", "risks:read", "risks:write",
	"notes:read", "notes:write", "action-items:read", "action-items:write", "webhooks:read", "webhooks:write"}

func newWorld(ctx context.Context, o options) (w *world, err error) {
	w = &world{o: o}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	if w.tmp, err = os.MkdirTemp("", "pmchaos-"); err != nil {
		return w, err
	}
	if o.Pmapi == "" {
		fmt.Fprintln(o.Log, "pmchaos: building pmapi with the release flags")
		if o.Pmapi, err = rig.Build(ctx, w.tmp); err != nil {
			return w, err
		}
		w.o.Pmapi = o.Pmapi
	}
	// A server of its own, never PMAPI_DATABASE_URL's: the run restarts it.
	srv, err := pgcluster.Start(ctx, pgcluster.Options{Durable: true, Log: o.Log, Citus: o.Citus})
	if err != nil {
		return w, err
	}
	if w.db, err = rig.Provision(ctx, srv, "pmchaos_", 0); err != nil {
		_ = srv.Stop(ctx)
		return w, err
	}
	var extra []string
	if o.Citus {
		// The tests' guard: a statement of pmapi's role that reaches more
		// than one shard fails, and the run counts the 5xx.
		if err := pgcluster.GuardMultiShard(ctx, srv.AdminURL, w.db.Name); err != nil {
			return w, err
		}
		extra = append(extra, "PMAPI_TENANT_SETTING=set_local")
	}
	w.rcv = newReceiver()
	caFile, err := rig.TrustFile(w.tmp, w.rcv.srv)
	if err != nil {
		return w, err
	}
	addr, err := rig.FreeAddr()
	if err != nil {
		return w, err
	}
	token := "pmadm_" + pmapi.RandomBase62(32)
	w.env = rig.Environ(w.db.AppURL, addr, token, caFile, append(extra, "PMAPI_METRICS_ADDR=off",
		"PMAPI_JOB_RESCUE_AFTER="+rescueAfter, "PMAPI_WEBHOOK_RETRY_SCHEDULE="+retrySchedule)...)
	w.base, w.health = "http://"+addr, "http://"+addr+"/healthz"
	if w.serve, err = w.startServe(ctx); err != nil {
		return w, err
	}
	if w.work, err = rig.Start(o.Pmapi, "work", w.env); err != nil {
		return w, err
	}
	c := rig.Client{Base: w.base, HTTP: &http.Client{Timeout: 30 * time.Second}}
	if w.tenant, err = rig.NewTenant(ctx, c, token, "pmchaos", scopes); err != nil {
		return w, err
	}
	hook, err := c.Call(ctx, "POST", "/openapi/v1/apps/"+w.tenant.AppID+"/webhooks", w.tenant.Console,
		map[string]any{"url": w.rcv.srv.URL + "/hook", "events": []string{"*"}})
	if err != nil {
		return w, err
	}
	w.subID = hook["id"].(string)
	w.rcv.secret.Store(hook["secret"].(string))
	fmt.Fprintf(o.Log, "pmchaos: PostgreSQL %s (fsync on%s), pmapi serve pid %d, pmapi work pid %d, receiver %s\n",
		w.db.Version, map[bool]string{true: ", Citus", false: ""}[o.Citus], w.serve.Pid(), w.work.Pid(), w.rcv.srv.URL)
	return w, nil
}

// placer runs the Citus verbs as the tables' owner.
func (w *world) placer(ctx context.Context) (*tenant.Placer, func(), error) {
	owner, err := pgxpool.New(ctx, w.db.OwnerURL)
	if err != nil {
		return nil, nil, err
	}
	return tenant.NewPlacer(map[string]*pgxpool.Pool{"default": owner}), owner.Close, nil
}

// moveWorkspace isolates the workspace and moves its shards to the worker
// that does not hold them, as an operator would under load.
func (w *world) moveWorkspace(ctx context.Context) error {
	placer, done, err := w.placer(ctx)
	if err != nil {
		return err
	}
	defer done()
	ws := tenant.Workspace{ID: uuid.MustParse(w.tenant.WorkspaceID), Shard: "default"}
	pl, err := placer.Isolate(ctx, ws)
	if err != nil {
		return err
	}
	top, err := pgcluster.Discover(ctx, w.db.Server.AdminURL)
	if err != nil {
		return err
	}
	for _, n := range top.Addresses()[1:] {
		if n != pl.Node {
			_, err = placer.Move(ctx, ws, n)
			return err
		}
	}
	return fmt.Errorf("no worker besides %s", pl.Node)
}

// restartWorkspaceNode crash-restarts the Citus node that holds the
// workspace now.
func (w *world) restartWorkspaceNode(ctx context.Context) error {
	placer, done, err := w.placer(ctx)
	if err != nil {
		return err
	}
	defer done()
	pl, err := placer.Where(ctx, tenant.Workspace{ID: uuid.MustParse(w.tenant.WorkspaceID), Shard: "default"})
	if err != nil {
		return err
	}
	return w.db.Server.CrashRestartNode(ctx, pl.Node)
}

func (w *world) startServe(ctx context.Context) (*rig.Proc, error) {
	p, err := rig.Start(w.o.Pmapi, "serve", w.env)
	if err != nil {
		return nil, err
	}
	return p, rig.WaitUp(ctx, w.health, p, 60*time.Second)
}

// killWorker kills `pmapi work` with SIGKILL and starts another at once.
func (w *world) killWorker() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.work.Kill()
	p, err := rig.Start(w.o.Pmapi, "work", w.env)
	if err != nil {
		return err
	}
	w.work = p
	return nil
}

// killAPI kills `pmapi serve` with SIGKILL, starts another at once and waits
// until it answers.
func (w *world) killAPI(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.serve.Kill()
	p, err := w.startServe(ctx)
	if p != nil {
		w.serve = p
	}
	return err
}

// healthy checks that both processes outlived the faults.
func (w *world) healthy(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range []*rig.Proc{w.serve, w.work} {
		if err := p.Err(); err != nil {
			return fmt.Errorf("pmapi %s exited after the faults: %v\n%s", p.Name, err, p.Logs())
		}
	}
	return rig.WaitUp(ctx, w.health, w.serve, 10*time.Second)
}

func (w *world) close() {
	w.mu.Lock()
	for _, p := range []*rig.Proc{w.serve, w.work} {
		if p != nil {
			p.Stop()
		}
	}
	w.mu.Unlock()
	if w.rcv != nil {
		w.rcv.srv.Close()
	}
	if w.db != nil {
		w.db.Close()
	}
	if w.tmp != "" {
		os.RemoveAll(w.tmp)
	}
}
