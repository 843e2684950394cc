package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/migrations"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

func onCitus(t *testing.T) bool {
	t.Helper()
	citus, err := migrations.HasCitus(context.Background(), testdb.OwnerPool(t))
	if err != nil {
		t.Fatal(err)
	}
	return citus
}

func placementCalls(ws string) []apitest.Request {
	base := "/admin/v1/workspaces/" + ws
	return []apitest.Request{
		{Method: "GET", Path: base + "/placement"},
		{Method: "POST", Path: base + "/isolate"},
		{Method: "POST", Path: base + "/move", Body: map[string]any{"node": "127.0.0.1:5432"}},
	}
}

// TestPlacementVerbsSayWhatTheyNeed: without the owner role's URL, and on plain
// PostgreSQL, the Citus verbs answer 409 naming what is missing, never a 500.
func TestPlacementVerbsSayWhatTheyNeed(t *testing.T) {
	env := apitest.New(t)
	tn := env.NewTenant(t)
	check := func(env *apitest.Env, requires string) {
		t.Helper()
		for _, req := range placementCalls(tn.WorkspaceID) {
			req.Header = env.Admin()
			r := env.Do(t, req)
			if r.Status != 409 || r.ErrorCode() != "CONFLICT" || r.ErrorDetails()["requires"] != requires {
				t.Errorf("%s %s: %d %s, want 409 CONFLICT requiring %s", req.Method, req.Path, r.Status, r.Raw, requires)
			}
		}
	}
	check(env, "owner-url")

	withOwner := apitest.New(t, func(d *apitest.Config) {
		d.Placer = tenant.NewPlacer(map[string]*pgxpool.Pool{"default": testdb.OwnerPool(t)})
	})
	if !onCitus(t) {
		check(withOwner, "citus")
	}
	r := withOwner.Do(
		t,
		apitest.Request{
			Method: "GET",
			Path:   "/admin/v1/workspaces/" + uuid.NewString() + "/placement",
			Header: withOwner.Admin(),
		},
	)
	if r.Status != 404 {
		t.Errorf("unknown workspace: %d %s, want 404", r.Status, r.Raw)
	}
	r = withOwner.Do(
		t,
		apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + tn.WorkspaceID + "/move", Header: withOwner.Admin(),
			Body: map[string]any{"node": " "}},
	)
	if r.Status != 400 || r.ErrorDetails()["field"] != "node" {
		t.Errorf("empty node: %d %s, want 400 naming node", r.Status, r.Raw)
	}
}

// TestMoveWorkspaceUnderLoad is the online move of docs/decisions/tenancy-and-citus.md on a real Citus
// cluster (make test-citus): while a client keeps creating tasks, another keeps
// reading, and a subscription receives every task.created, the workspace is
// isolated and its shards moved to the other worker. Every acknowledged write
// is then in the workspace's shard on the new node, every event is delivered,
// no read or write failed, and a neighbouring workspace stayed where it was.
func TestMoveWorkspaceUnderLoad(t *testing.T) {
	if !onCitus(t) {
		t.Skip("needs a Citus cluster (make test-citus)")
	}
	ctx := context.Background()
	owner := testdb.OwnerPool(t)
	rcv := apitest.NewReceiver(t)
	placer := tenant.NewPlacer(map[string]*pgxpool.Pool{"default": owner})
	placer.Timeout = 3 * time.Minute // a copy that cannot catch up fails the test, not the suite's deadline
	// A pool of the test's own: its shard's node pools, and what they are
	// sent, are then this test's alone.
	pool, err := tenant.Connect(ctx, testdb.Database(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := webhook.NewSender(true, rcv.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	env := apitest.NewRoutedOnPool(t, pool, func(d *apitest.Config) {
		d.WebhookAllowLoopback, d.WebhookSender = true, sender
		d.Placer = placer
		d.RateLimitPerMinute = 1_000_000 // the load, not the limiter, is under test
	})
	t.Cleanup(pool.Close)
	env.StartWorkers(t)
	tn := env.NewTenant(t)
	neighbour := env.NewTenant(t)
	tn.Subscribe(t, rcv.URL, "task.created")
	prj := tn.CreateProject(t, map[string]any{"name": "moving"})["id"].(string)
	placement := func(ws string) map[string]any {
		t.Helper()
		r := env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/" + ws + "/placement", Header: env.Admin()})
		if r.Status != 200 {
			t.Fatalf("placement: %d %s", r.Status, r.Raw)
		}
		return r.Data()
	}
	neighbourBefore := placement(neighbour.WorkspaceID)["node"]

	base := env.Listen(t)
	load, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	var acked, failures []string
	var reads int
	var wg sync.WaitGroup
	var unavailable int
	var call func(method, path string, body any) (int, []byte, error)
	call = func(method, path string, body any) (int, []byte, error) {
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequestWithContext(context.WithoutCancel(load), method, base+path, rd)
		req.Header.Set("X-Client-ID", tn.ClientID)
		req.Header.Set("Authorization", tn.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		if resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "" {
			// The documented answer while a placement keeps switching: nothing
			// was written, and a client tries again (after a moment).
			mu.Lock()
			unavailable++
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			return call(method, path, body)
		}
		return resp.StatusCode, buf.Bytes(), nil
	}
	wg.Add(2)
	go func() { // the writer
		defer wg.Done()
		for i := 0; load.Err() == nil; i++ {
			status, raw, err := call(
				"POST",
				apitest.TaskBase+"create",
				map[string]any{"projectId": prj, "title": fmt.Sprintf("task %d", i)},
			)
			mu.Lock()
			if err != nil || status != 201 {
				failures = append(failures, fmt.Sprintf("create: %d %v %s", status, err, raw))
			} else {
				var env struct{ Data struct{ ID string } }
				_ = json.Unmarshal(raw, &env)
				acked = append(acked, env.Data.ID)
			}
			mu.Unlock()
		}
	}()
	go func() { // the reader
		defer wg.Done()
		for load.Err() == nil {
			status, raw, err := call("GET", "/openapi/v1/resource/project/detail?id="+url.QueryEscape(prj), nil)
			mu.Lock()
			if err != nil || status != 200 {
				failures = append(failures, fmt.Sprintf("read: %d %v %s", status, err, raw))
			}
			reads++
			mu.Unlock()
			time.Sleep(5 * time.Millisecond) // leave the two cores to the writes and the move
		}
	}()

	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	r := env.Do(
		t,
		apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + tn.WorkspaceID + "/isolate", Header: env.Admin()},
	)
	isolateTook := time.Since(began)
	if r.Status != 200 || r.Data()["isolated"] != true {
		stop()
		t.Fatalf("isolate: %d %s\nlog: %s", r.Status, r.Raw, lastLines(env.Logs.String(), 3))
	}
	from := r.Str("node")
	var to string
	if err := owner.QueryRow(ctx, `select nodename || ':' || nodeport from pg_dist_node
		where noderole = 'primary' and shouldhaveshards and nodename || ':' || nodeport <> $1
		order by nodeid limit 1`, from).Scan(&to); err != nil {
		stop()
		t.Fatalf("another worker than %s: %v", from, err)
	}
	began = time.Now()
	r = env.Do(
		t,
		apitest.Request{Method: "POST", Path: "/admin/v1/workspaces/" + tn.WorkspaceID + "/move", Header: env.Admin(),
			Body: map[string]any{"node": to}},
	)
	moveTook := time.Since(began)
	if r.Status != 200 || r.Str("node") != to {
		stop()
		t.Fatalf("move to %s: %d %s\nlog: %s", to, r.Status, r.Raw, lastLines(env.Logs.String(), 3))
	}
	time.Sleep(500 * time.Millisecond)
	stop()
	wg.Wait()

	if len(failures) > 0 {
		t.Errorf("%d calls failed during the move, first: %s", len(failures), failures[0])
		for _, f := range failures {
			t.Logf("%s\n  server: %s", f, requestLog(env, f))
		}
	}
	if len(acked) == 0 || reads == 0 {
		t.Fatalf("%d writes and %d reads acknowledged: the load did not run", len(acked), reads)
	}
	if got := placement(tn.WorkspaceID); got["node"] != to || got["isolated"] != true {
		t.Errorf("placement after the move: %v, want isolated on %s", got, to)
	}
	if got := placement(neighbour.WorkspaceID)["node"]; got != neighbourBefore {
		t.Errorf("the neighbouring workspace moved from %v to %v", neighbourBefore, got)
	}

	var unforced []string
	rows, err := owner.Query(ctx, `select c.relname from pg_dist_partition p join pg_class c on c.oid = p.logicalrelid
		where p.partmethod = 'h' and not c.relforcerowsecurity`)
	if err != nil {
		t.Fatal(err)
	}
	if unforced, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(unforced) > 0 {
		t.Errorf("row level security is no longer forced on %v (%v): the move must restore it", unforced, err)
	}

	// Read the shard itself on the new node: the rows are there, not only
	// reachable through the coordinator.
	ws := uuid.MustParse(tn.WorkspaceID)
	var shardID int64
	if err := owner.QueryRow(ctx, "select get_shard_id_for_distribution_column('tasks', $1::uuid)", ws).
		Scan(&shardID); err != nil {
		t.Fatal(err)
	}
	onNode := tasksOnNode(t, to, "tasks_"+strconv.FormatInt(shardID, 10), ws)
	for _, id := range acked {
		u, err := task.ParseID(id)
		if err != nil || !onNode[u] {
			// Where it went instead: the source placement stays until Citus's
			// deferred cleanup drops it.
			_, onSource := tasksOnNodeIfThere(t, from, "tasks_"+strconv.FormatInt(shardID, 10), ws)[u]
			t.Fatalf("acknowledged task %s is not in shard %d on %s (%d rows there); in the old placement on %s: %v",
				id, shardID, to, len(onNode), from, onSource)
		}
	}

	apitest.Eventually(t, apitest.JobWait, "a task.created delivery for every acknowledged write", func() bool {
		got := map[string]bool{}
		for _, req := range rcv.Requests() {
			var b struct{ Data struct{ ID string } }
			if json.Unmarshal(req.Body, &b) == nil {
				got[b.Data.ID] = true
			}
		}
		for _, id := range acked {
			if !got[id] {
				return false
			}
		}
		return true
	})
	t.Logf("%d writes and %d reads during isolate (%v) and move (%v) from %s to %s; %d answers 503 (retried)",
		len(acked), reads, isolateTook.Round(time.Millisecond), moveTook.Round(time.Millisecond), from, to, unavailable)

	// The workspace's requests now go to the new node, where its shards are:
	// the move's announcement reached the server's listener.
	shard := env.Directory.Shards().Default
	apitest.Eventually(t, 5*time.Second, "the workspace routed to "+to, func() bool {
		n := shard.NodeOf(ctx, ws)
		return n != nil && n.Addr == to
	})
	sent := func() map[string]int64 {
		out := map[string]int64{}
		for _, n := range shard.Nodes() {
			out[n.Addr] = n.Sent()
		}
		return out
	}
	before := sent()
	const calls = 20
	for range calls {
		if r := tn.Do(t, "GET", "/openapi/v1/resource/project/detail?id="+url.QueryEscape(prj), nil); r.Status != 200 {
			t.Fatalf("read after the move: %d %s", r.Status, r.Raw)
		}
	}
	after := sent()
	if got := after[to] - before[to]; got < calls {
		t.Errorf("%d reads after the move sent %d calls to the new node %s, want %d at least", calls, got, to, calls)
	}
	if got := after[from] - before[from]; got != 0 {
		t.Errorf("%d calls went to the old node %s after the move", got, from)
	}
}

// tasksOnNode reads a tasks shard directly on one Citus node, as the superuser.
func tasksOnNode(t *testing.T, node, shardTable string, ws uuid.UUID) map[uuid.UUID]bool {
	t.Helper()
	ids, err := readTasksOnNode(t, node, shardTable, ws)
	if err != nil {
		t.Fatalf("read %s on %s: %v", shardTable, node, err)
	}
	return ids
}

// tasksOnNodeIfThere is tasksOnNode for a shard that may be gone: nothing.
func tasksOnNodeIfThere(t *testing.T, node, shardTable string, ws uuid.UUID) map[uuid.UUID]bool {
	ids, _ := readTasksOnNode(t, node, shardTable, ws)
	return ids
}

func readTasksOnNode(t *testing.T, node, shardTable string, ws uuid.UUID) (map[uuid.UUID]bool, error) {
	t.Helper()
	u, err := url.Parse(testdb.AdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(node)
	u.Host = net.JoinHostPort(host, port)
	u.Path = "/" + testdb.Database(t).Name
	conn, err := pgx.Connect(context.Background(), u.String())
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(
		context.Background(),
		"select id from "+pgx.Identifier{shardTable}.Sanitize()+" where workspace_id = $1",
		ws,
	)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// requestLog returns the server's log lines of the request whose failure
// envelope (its requestId) is in answer: the cause a 5xx keeps from the client.
func requestLog(env *apitest.Env, answer string) string {
	_, rest, found := strings.Cut(answer, `"requestId":"`)
	id, _, _ := strings.Cut(rest, `"`)
	if !found || id == "" {
		return "(no request id)"
	}
	var lines []string
	for _, l := range strings.Split(env.Logs.String(), "\n") {
		if strings.Contains(l, id) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n  ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestJobsLeftOnTheOldNodeFollowTheWorkspace: River's jobs wait on the node
// whose transaction queued them. A workspace's fan-out jobs queued while no
// worker runs stay on its old node when it moves; the workers then run them
// there, their transactions go to the workspace's new node, and every event
// is delivered once.
func TestJobsLeftOnTheOldNodeFollowTheWorkspace(t *testing.T) {
	if !onCitus(t) {
		t.Skip("needs a Citus cluster (make test-citus)")
	}
	ctx := context.Background()
	rcv := apitest.NewReceiver(t)
	placer := tenant.NewPlacer(map[string]*pgxpool.Pool{"default": testdb.OwnerPool(t)})
	placer.Timeout = 3 * time.Minute
	env := apitest.Reaching(t, rcv, true, func(d *apitest.Config) { d.Placer = placer })
	tn := env.NewTenant(t)
	tn.Subscribe(t, rcv.URL, "task.created")
	prj := tn.TaskProject(t)
	const created = 5
	for i := range created {
		tn.CreateTask(t, map[string]any{"projectId": prj, "title": fmt.Sprintf("left behind %d", i)})
	}
	ws := uuid.MustParse(tn.WorkspaceID)
	w := tenant.Workspace{ID: ws, Shard: "default"}
	from, err := placer.Isolate(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	waiting := func() map[string]int { // fan-out jobs of the workspace waiting, by the node's port
		out := map[string]int{}
		for _, p := range testdb.NodeOwnerPools(t) {
			var port, n int
			if err := p.QueryRow(ctx, `select inet_server_port(), count(*) from river.river_job
				where kind = 'event.fanout' and args->>'workspaceId' = $1 and state = 'available'`,
				ws.String()).Scan(&port, &n); err != nil {
				t.Fatal(err)
			}
			out[strconv.Itoa(port)] = n
		}
		return out
	}
	_, fromPort, _ := net.SplitHostPort(from.Node)
	if got := waiting(); got[fromPort] < created {
		t.Fatalf("fan-out jobs waiting by node port: %v, want %d on the workspace's node %s", got, created, from.Node)
	}
	var to string
	if err := testdb.OwnerPool(t).QueryRow(ctx, `select nodename || ':' || nodeport from pg_dist_node
		where groupid <> 0 and noderole = 'primary' and nodename || ':' || nodeport <> $1 order by groupid limit 1`,
		from.Node).Scan(&to); err != nil {
		t.Fatal(err)
	}
	if _, err := placer.Move(ctx, w, to); err != nil {
		t.Fatal(err)
	}
	env.StartWorkers(t)
	apitest.Eventually(t, apitest.JobWait, "every task.created delivered", func() bool {
		return len(rcv.Requests()) >= created
	})
	time.Sleep(500 * time.Millisecond)
	if n := len(rcv.Requests()); n != created {
		t.Errorf("%d deliveries for %d events, want one each", n, created)
	}
	if got := waiting(); got[fromPort] != 0 {
		t.Errorf("fan-out jobs still waiting after the workers ran: %v", got)
	}
}
