package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/webhook"
)

const feedPath = "/openapi/v1/events"

// errRollBack makes a writer's transaction roll back: its events must never
// be listed, and the numbers it held go to the next writer.
var errRollBack = errors.New("rolled back on purpose")

// emitInTx writes events of the given types to the outbox and the log in one
// transaction of the server's shard, and returns their ids once committed;
// hold runs after the write and before the commit (or the rollback it asks
// for), while the transaction holds its workspace's numbers.
func emitInTx(t *testing.T, ws uuid.UUID, types []string, hold func() error) ([]uuid.UUID, error) {
	t.Helper()
	var ids []uuid.UUID
	err := testdb.ServerShard(t).Tx(context.Background(), ws, func(tx pgx.Tx) error {
		ids = ids[:0]
		out := make([]webhook.Outgoing, len(types))
		for i, typ := range types {
			id := pmapi.NewID()
			ids = append(ids, id)
			out[i] = webhook.Outgoing{ID: id, Type: typ,
				Data: fmt.Appendf(nil, `{"id": "x_%d", "projectId": "prj_feed"}`, i)}
		}
		if err := webhook.InsertOutbox(context.Background(), tx, ws, 0, out); err != nil {
			return err
		}
		if hold != nil {
			return hold()
		}
		return nil
	})
	return ids, err
}

// poll reads the feed once from cursor (none: from the start).
func poll(t *testing.T, tn *apitest.Tenant, cursor string, limit int) (ids []string, next string, more bool) {
	t.Helper()
	q := map[string]string{"limit": strconv.Itoa(limit)}
	if cursor != "" {
		q["after"] = cursor
	}
	r := tn.Get(t, feedPath, q)
	if r.Status != 200 {
		t.Fatalf("GET %s %v: %d %s", feedPath, q, r.Status, r.Raw)
	}
	for _, it := range r.Items() {
		ids = append(ids, it["id"].(string))
	}
	next, _ = r.Data()["nextCursor"].(string)
	more, _ = r.Data()["hasMore"].(bool)
	if next == "" {
		t.Fatalf("the feed answered no nextCursor: %s", r.Raw)
	}
	return ids, next, more
}

// TestFeedListsEveryCommittedEventOnce is the feed's property: writers on
// separate connections, each holding its transaction open a random while
// after writing its events (so they commit in an order other than their
// events' ids, which are made before the write), some rolling back, and a
// consumer that polls with its last cursor the whole time sees every
// committed event exactly once, each transaction's events together and in
// order, and never an event of a rollback.
func TestFeedListsEveryCommittedEventOnce(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	ws := uuid.MustParse(tn.WorkspaceID)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)

	const writers, txPerWriter = 6, 12
	var mu sync.Mutex
	var committed [][]uuid.UUID
	var rolledBack []uuid.UUID
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(seed, uint64(w)))
			for range txPerWriter {
				types := make([]string, 1+rnd.IntN(3))
				for i := range types {
					types[i] = "task.updated"
				}
				pause := time.Duration(rnd.IntN(15)) * time.Millisecond
				rollBack := rnd.IntN(5) == 0
				ids, err := emitInTx(t, ws, types, func() error {
					time.Sleep(pause)
					if rollBack {
						return errRollBack
					}
					return nil
				})
				mu.Lock()
				switch {
				case err == nil:
					committed = append(committed, slices.Clone(ids))
				case rollBack && errors.Is(err, errRollBack):
					rolledBack = append(rolledBack, ids...)
				default:
					t.Errorf("writer %d: %v", w, err)
				}
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	rnd := rand.New(rand.NewPCG(seed, 99))
	var seen []string
	cursor := ""
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		ids, next, more := poll(t, tn, cursor, 1+rnd.IntN(8))
		seen = append(seen, ids...)
		cursor = next
		if finished && !more && len(ids) == 0 {
			break
		}
	}

	index := map[string]int{}
	for i, id := range seen {
		if j, dup := index[id]; dup {
			t.Errorf("event %s listed twice (at %d and %d)", id, j, i)
		}
		index[id] = i
	}
	total := 0
	for _, tx := range committed {
		total += len(tx)
		first, ok := index[pmapi.FormatID(webhook.EventPrefix, tx[0])]
		for k, id := range tx {
			at, listed := index[pmapi.FormatID(webhook.EventPrefix, id)]
			switch {
			case !listed:
				t.Errorf("committed event %s never listed", id)
			case ok && at != first+k:
				t.Errorf("event %s of a transaction at %d, want %d: a transaction's events are listed together",
					id, at, first+k)
			}
		}
	}
	for _, id := range rolledBack {
		if _, listed := index[pmapi.FormatID(webhook.EventPrefix, id)]; listed {
			t.Errorf("event %s of a rolled-back transaction listed", id)
		}
	}
	if len(seen) != total {
		t.Errorf("listed %d events, %d committed", len(seen), total)
	}
	if len(rolledBack) == 0 || len(committed) < writers {
		t.Logf("committed %d transactions, rolled back %d events", len(committed), len(rolledBack))
	}
}

// TestFeedCursorPastRetentionIsGone: once events a cursor has not read are
// dropped with their partition by the retention run, the cursor answers 410
// CURSOR_EXPIRED;
// a cursor at the oldest retained event and a read from the start go on.
func TestFeedCursorPastRetentionIsGone(t *testing.T) {
	tn := apitest.NewTenant(t)
	ws := uuid.MustParse(tn.WorkspaceID)
	for range 5 {
		if _, err := emitInTx(t, ws, []string{"task.updated"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	_, atOne, _ := poll(t, tn, "", 1)
	_, atThree, _ := poll(t, tn, atOne, 2)
	backdate(t, "event_log", "occurred_at", "seq <= 3", ws)
	kept, err := webhook.KeepPartitions(context.Background(), testdb.ServerShard(t), webhook.DefaultEventRetention,
		time.Now())
	if err != nil || kept.Dropped == 0 {
		t.Fatalf("the retention run dropped %d partitions (%v)", kept.Dropped, err)
	}
	r := tn.Get(t, feedPath, map[string]string{"after": atOne})
	apitest.WantError(t, r, 410, "CURSOR_EXPIRED")
	if ids, _, _ := poll(t, tn, atThree, 10); len(ids) != 2 {
		t.Errorf("from the cursor at the third event: %v, want the two left", ids)
	}
	if ids, _, _ := poll(t, tn, "", 10); len(ids) != 2 {
		t.Errorf("from the start: %v, want the two retained", ids)
	}
}

// TestFeedListsWhatTheCredentialMayRead: the feed needs events:read, and
// lists an event only to a key that may read its resource; types and
// projectId narrow it; a bad or foreign cursor and an unknown type are 400.
func TestFeedListsWhatTheCredentialMayRead(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	other := apitest.NewTenant(t)
	ws := uuid.MustParse(tn.WorkspaceID)
	if _, err := emitInTx(t, ws, []string{"task.created", "project.updated", "task.updated"}, nil); err != nil {
		t.Fatal(err)
	}
	types := func(r *apitest.Response) []string {
		var out []string
		for _, it := range r.Items() {
			out = append(out, it["type"].(string))
		}
		return out
	}

	projectsOnly := tn.WithKey(tn.NewKey(t, webhook.ScopeEvents, "projects:read"))
	if got := types(projectsOnly.Get(t, feedPath, nil)); !slices.Equal(got, []string{"project.updated"}) {
		t.Errorf("a key with projects:read alone lists %v, want only the project's event", got)
	}
	apitest.WantError(t, tn.WithKey(tn.NewKey(t, "tasks:read")).Get(t, feedPath, nil), 403, "INSUFFICIENT_SCOPE")

	if got := types(tn.Get(t, feedPath, map[string]string{"types": "task.updated,task.created"})); !slices.Equal(
		got, []string{"task.created", "task.updated"}) {
		t.Errorf("types=task.updated,task.created lists %v", got)
	}
	if got := types(tn.Get(t, feedPath, map[string]string{"projectId": pmapi.FormatID(pmapi.ProjectIDPrefix,
		pmapi.NewID())})); len(got) != 0 {
		t.Errorf("another project's events: %v", got)
	}

	_, foreign, _ := poll(t, other, "", 1)
	for name, q := range map[string]map[string]string{
		"garbage cursor":        {"after": "not-a-cursor"},
		"another's cursor":      {"after": foreign},
		"a cursor ahead":        {"after": webhook.FeedCursor(ws, 1000)},
		"unknown type":          {"types": "task.exploded"},
		"limit out of range":    {"limit": "500"},
		"malformed project id":  {"projectId": "tsk_nope"},
		"empty cursor is given": {"after": ""},
	} {
		r := tn.Get(t, feedPath, q)
		if r.Status != 400 || r.ErrorCode() != "VALIDATION_FAILED" {
			t.Errorf("%s: %d %s, want 400 VALIDATION_FAILED", name, r.Status, r.Raw)
		}
	}
	// Nothing newer: the cursor comes back as it went.
	_, last, _ := poll(t, tn, "", 10)
	if _, again, more := poll(t, tn, last, 10); again != last || more {
		t.Errorf("an idle read from %s answered %s (hasMore %v), want its own position", last, again, more)
	}
}

// TestFeedListsTheWritesEvents: the events the API's writes emit are listed
// in the order they were made, with the payloads their deliveries carry (the
// outbox's rows, which no worker fans out here).
func TestFeedListsTheWritesEvents(t *testing.T) {
	t.Parallel()
	tn := apitest.NewTenant(t)
	prj := tn.TaskProject(t)
	task := tn.CreateTask(t, map[string]any{"projectId": prj, "title": "fed"})["id"].(string)
	if r := tn.Do(t, "POST", apitest.TaskBase+"update",
		map[string]any{"taskId": task, "status": "IN_PROGRESS", "title": "fed again"}); r.Status != 201 {
		t.Fatalf("update: %d %s", r.Status, r.Raw)
	}
	outbox := tn.Events(t)
	items := tn.Get(t, feedPath, map[string]string{"limit": "200"}).Items()
	if len(items) != len(outbox) {
		t.Fatalf("the feed lists %d events, the writes emitted %d", len(items), len(outbox))
	}
	for i, ev := range outbox {
		got, _ := json.Marshal(items[i]["data"])
		want, _ := json.Marshal(ev.Data)
		if items[i]["type"] != ev.Type || string(got) != string(want) {
			t.Errorf("event %d: the feed has %v %s, the outbox %s %s", i, items[i]["type"], got, ev.Type, want)
		}
	}
	onProject := tn.Get(t, feedPath, map[string]string{"projectId": prj}).Items()
	if len(onProject) == 0 || len(onProject) > len(items) {
		t.Errorf("projectId=%s lists %d of %d events", prj, len(onProject), len(items))
	}
}
