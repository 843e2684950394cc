package task_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/tenant"
)

// BenchmarkBackendCPUPerRead splits what PostgreSQL spends on a task read
// (docs/performance.md) by reading the backend's own CPU time around b.N
// reads of one task, one step of pmapi's read added at a time:
//
//	go build -o bin/pmapi ./cmd/pmapi && bin/pmapi devdb exec -- \
//	  go test -run '^$' -bench BackendCPUPerRead -benchtime 20000x ./resource/task/
func BenchmarkBackendCPUPerRead(b *testing.B) {
	ctx := context.Background()
	f, p := inProject(b, "read cost")
	tk, err := task.Store{
		Events: event.Discard{},
	}.Create(
		ctx,
		f.Shard,
		f.WS,
		task.NewTask{ProjectID: p.ID, Title: "read me", Priority: 3},
	)
	if err != nil {
		b.Fatal(err)
	}
	const row = `select t.id, t.project_id, t.title, t.description, t.status, t.priority, t.assignee_id, t.reporter_id,
		t.start_date, t.due_date, t.created_at, t.updated_at, t.archived_at
		from tasks t where t.workspace_id = $1 and t.id = $2`
	connect := func(url string) *pgx.Conn {
		cfg, err := tenant.PoolConfig(url)
		if err != nil {
			b.Fatal(err)
		}
		c, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close(ctx) })
		return c
	}
	db := testdb.Database(b)
	steps := []struct {
		name string
		url  string
		once string // run once on the connection first
		read func(c *pgx.Conn) error
	}{
		{"round trip: select 1", db.AppURL, "", func(c *pgx.Conn) error { _, err := c.Exec(ctx, "select 1"); return err }},
		{"the row by key, no row security (superuser)", db.AdminURL, "", func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, row, f.WS, tk.ID)
			return err
		}},
		{
			"the row under row security, workspace set once",
			db.AppURL,
			"select set_config('pmapi.workspace_id', '" + f.WS.String() + "', false)",
			func(c *pgx.Conn) error { _, err := c.Exec(ctx, row, f.WS, tk.ID); return err },
		},
		{"pmapi's read: set_config and the row in one batch", db.AppURL, "", func(c *pgx.Conn) error {
			batch := &pgx.Batch{}
			batch.Queue("select set_config('pmapi.workspace_id', $1, true)", f.WS.String())
			batch.Queue(row, f.WS, tk.ID)
			return c.SendBatch(ctx, batch).Close()
		}},
		{"set_config alone", db.AppURL, "", func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, "select set_config('pmapi.workspace_id', $1, true)", f.WS.String())
			return err
		}},
	}
	for _, s := range steps {
		b.Run(s.name, func(b *testing.B) {
			c := connect(s.url)
			if s.once != "" {
				if _, err := c.Exec(ctx, s.once); err != nil {
					b.Fatal(err)
				}
			}
			for range 100 { // prepare and plan-cache warm-up
				if err := s.read(c); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := testdb.BackendCPU(b, c)
			for b.Loop() {
				if err := s.read(c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((testdb.BackendCPU(b, c)-cpu0)/float64(b.N)*1e6, "backend-µs/op")
		})
	}
}
