package note_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/note"
	"github.com/pmapi/pmapi/resource/project"
)

// walk reads the notes list by updatedAt from since, page by page with
// limits drawn from rng, into mirror (id to the item), and answers the
// updatedAt to start the next walk from: the last one it saw.
func walk(t *testing.T, tn *apitest.Tenant, rng *rand.Rand, since string, mirror map[string]map[string]any) string {
	t.Helper()
	cursor := ""
	for {
		q := map[string]string{"sort": "updatedAt", "limit": fmt.Sprint(1 + rng.IntN(7))}
		if since != "" {
			q["updatedSince"] = since
		}
		if cursor != "" {
			q["cursor"] = cursor
		}
		r := tn.Get(t, apitest.NoteBase+"list", q)
		if r.Status != 200 {
			t.Fatalf("list %v: %d %s", q, r.Status, r.Raw)
		}
		for _, it := range r.Items() {
			mirror[it["id"].(string)] = it
			since = it["updatedAt"].(string)
		}
		next, _ := r.Data()["nextCursor"].(string)
		if next == "" {
			return since
		}
		cursor = next
	}
}

func TestNotesListByUpdate(t *testing.T) {
	t.Parallel()
	a, b := apitest.TwoTenants(t)
	p := a.CreateProject(t, map[string]any{"name": "sync"})["id"].(string)
	var ids []string
	for i := range 4 {
		ids = append(ids, a.Created(t, apitest.NoteBase+"create", map[string]any{"projectId": p,
			"body": fmt.Sprint("note ", i)})["id"].(string))
	}
	// The oldest note changed last moves to the end of the walk.
	up := a.Created(t, apitest.NoteBase+"update", map[string]any{"noteId": ids[0], "body": "changed"})
	want := append(slices.Clone(ids[1:]), ids[0])
	// A page holds only changes older than the horizon, a second behind.
	var got []string
	apitest.Eventually(t, 10*time.Second, "the walk sees every note", func() bool {
		got = nil
		cursor := ""
		for {
			q := map[string]string{"sort": "updatedAt", "limit": "2", "cursor": cursor}
			r := a.Get(t, apitest.NoteBase+"list", q)
			if r.Status != 200 {
				t.Fatalf("list: %d %s", r.Status, r.Raw)
			}
			got = append(got, r.IDs()...)
			if cursor, _ = r.Data()["nextCursor"].(string); cursor == "" {
				return slices.Equal(got, want)
			}
		}
	})
	since := a.Get(t, apitest.NoteBase+"list", map[string]string{"updatedSince": up["updatedAt"].(string)}).IDs()
	if !slices.Equal(since, ids[:1]) {
		t.Errorf("updatedSince the last change: %v, want %v", since, ids[:1])
	}
	// updatedSince keeps the default order, newest first.
	all := a.Get(t, apitest.NoteBase+"list", map[string]string{"updatedSince": "2000-01-01"}).IDs()
	if !slices.Equal(all, []string{ids[3], ids[2], ids[1], ids[0]}) {
		t.Errorf("updatedSince in the default order: %v", all)
	}
	for _, q := range []map[string]string{
		{"sort": "createdAt"}, {"updatedSince": "yesterday"}, {"updatedSince": ""}, {"sort": "updatedAt", "cursor": "x"},
	} {
		apitest.WantError(t, a.Get(t, apitest.NoteBase+"list", q), 400, "VALIDATION_FAILED")
	}
	// A cursor of one order is refused by the other.
	first := a.Get(t, apitest.NoteBase+"list", map[string]string{"limit": "1"})
	apitest.WantError(t, a.Get(t, apitest.NoteBase+"list", map[string]string{"sort": "updatedAt",
		"cursor": first.Data()["nextCursor"].(string)}), 400, "VALIDATION_FAILED")
	for _, q := range []map[string]string{{"updatedSince": "2000-01-01"}, {"sort": "updatedAt"},
		{"sort": "updatedAt", "updatedSince": "2000-01-01"}} {
		if ids := b.Get(t, apitest.NoteBase+"list", q).IDs(); len(ids) != 0 {
			t.Errorf("B lists A's notes with %v: %v", q, ids)
		}
	}
}

// TestNotesMirrorWhileWritersCommitOutOfOrder: writers on their own
// connections create and change notes, each transaction taking its time
// (its updated_at, now(), is its start; it commits after transactions that
// started later) and a fifth of them rolling back, while a client walks the
// list by updatedAt from the last updatedAt it saw. At the end the client's
// mirror is the table: every note, with its last body and updatedAt. Notes
// are only created and changed here: a deleted row leaves lists, and a
// mirror learns of it from the event feed's note.deleted (docs/sdk.md).
func TestNotesMirrorWhileWritersCommitOutOfOrder(t *testing.T) {
	tn := apitest.NewTenant(t)
	ws := uuid.MustParse(tn.WorkspaceID)
	prj := tn.CreateProject(t, map[string]any{"name": "mirror"})["id"].(string)
	pid, err := project.ParseID(prj)
	if err != nil {
		t.Fatal(err)
	}
	shard := testdb.ServerShard(t)
	ctx := context.Background()

	var mu sync.Mutex
	var known []uuid.UUID
	var wg sync.WaitGroup
	const writers, rounds = 6, 25
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range rounds {
				errRollback := fmt.Errorf("rolled back")
				err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
					// The transaction's now() is fixed here; its write and
					// commit come a random while later.
					time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond)
					mu.Lock()
					var id uuid.UUID
					if len(known) > 0 && rng.IntN(3) > 0 {
						id = known[rng.IntN(len(known))]
					}
					mu.Unlock()
					body := fmt.Sprintf("writer %d round %d", w, i)
					var err error
					if id == uuid.Nil {
						id = pmapi.NewID()
						_, err = tx.Exec(ctx, `insert into notes (workspace_id, id, project_id, body)
							values ($1, $2, $3, $4)`, ws, id, pid, body)
					} else {
						_, err = tx.Exec(ctx, `update notes set body = $3, updated_at = now()
							where workspace_id = $1 and id = $2`, ws, id, body)
					}
					if err != nil {
						return err
					}
					time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
					if rng.IntN(5) == 0 {
						return errRollback
					}
					mu.Lock()
					if !slices.Contains(known, id) {
						known = append(known, id)
					}
					mu.Unlock()
					return nil
				})
				if err != nil && err != errRollback {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	rng := rand.New(rand.NewPCG(1, 2))
	mirror := map[string]map[string]any{}
	since := ""
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		since = walk(t, tn, rng, since, mirror)
	}
	// What committed last is a second old when the horizon passes it.
	time.Sleep(1100 * time.Millisecond)
	walk(t, tn, rng, since, mirror)

	table := map[string][2]any{}
	if err := testdb.InWorkspace(t, testdb.AppPool(t), tn.WorkspaceID, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "select id, body, updated_at from notes where workspace_id = $1", ws)
		if err != nil {
			return err
		}
		var id uuid.UUID
		var body string
		var at time.Time
		_, err = pgx.ForEachRow(rows, []any{&id, &body, &at}, func() error {
			table[pmapi.FormatID(note.IDPrefix, id)] = [2]any{body, at}
			return nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(table) < writers {
		t.Fatalf("the writers left %d notes", len(table))
	}
	if len(mirror) != len(table) {
		t.Errorf("the mirror holds %d notes, the table %d", len(mirror), len(table))
	}
	for id, row := range table {
		m, ok := mirror[id]
		if !ok {
			t.Errorf("the mirror lost %s", id)
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m["updatedAt"].(string))
		if err != nil || m["body"] != row[0] || !at.Equal(row[1].(time.Time)) {
			t.Errorf("%s: mirror %v %v, table %v %v", id, m["body"], m["updatedAt"], row[0], row[1])
		}
	}
}
