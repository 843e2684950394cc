package tenant_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/tenant"
)

func TestNewLocalSettingRefusesWhatCannotBeInlined(t *testing.T) {
	for _, c := range []struct{ name, value string }{
		{"pg_trgm.word_similarity_threshold", "0.3'; drop table users; --"},
		{"pg_trgm.word_similarity_threshold", `0.3\`},
		{"pg_trgm.word_similarity_threshold", "0 3"},
		{"pg_trgm.word_similarity_threshold", ""},
		{"pg_trgm.word_similarity_threshold = 1; set role", "x"},
		{"Statement_Timeout", "1s"},
		{"pmapi.workspace_id", "00000000-0000-0000-0000-000000000000"},
	} {
		if _, err := tenant.NewLocalSetting(c.name, c.value); err == nil {
			t.Errorf("NewLocalSetting(%q, %q) accepted", c.name, c.value)
		}
	}
	for _, c := range []struct{ name, value string }{
		{"pg_trgm.word_similarity_threshold", "0.3"},
		{"statement_timeout", "5s"},
		{"search_path", "public"},
	} {
		if _, err := tenant.NewLocalSetting(c.name, c.value); err != nil {
			t.Errorf("NewLocalSetting(%q, %q): %v", c.name, c.value, err)
		}
	}
}

// statements records the SQL a connection sends in batches.
type statements struct {
	mu  sync.Mutex
	sql []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (s *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (s *statements) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sql = append(s.sql, d.SQL)
}
func (s *statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (s *statements) sent(prefix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.sql {
		if strings.HasPrefix(q, prefix) {
			return true
		}
	}
	return false
}

// TestQueueLocalSettingFollowsTheMode: the setting, queued in a Read or given
// to ReadWith (with a second one there), holds for the rest of the read and
// not after it, and travels the way the workspace does: SET LOCAL in SetLocal
// mode (what Citus propagates to its workers), set_config otherwise, with
// ReadWith's settings all in the workspace's own statement.
func TestQueueLocalSettingFollowsTheMode(t *testing.T) {
	ctx := context.Background()
	set := tenant.MustLocalSetting("pg_trgm.word_similarity_threshold", "0.25")
	second := tenant.MustLocalSetting("pg_trgm.similarity_threshold", "0.15")
	for _, mode := range []tenant.SettingMode{tenant.SetConfig, tenant.SetLocal} {
		for _, with := range []bool{false, true} {
			t.Run(fmt.Sprint(modeName(mode), " ReadWith ", with), func(t *testing.T) {
				cfg, err := pgxpool.ParseConfig(testdb.Database(t).AppURL)
				if err != nil {
					t.Fatal(err)
				}
				sent := &statements{}
				cfg.MaxConns, cfg.ConnConfig.Tracer = 1, sent
				pool, err := pgxpool.NewWithConfig(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer pool.Close()
				shard := tenant.NewShard("default", pool, mode)
				var inside, insideSecond string
				read := func(b *pgx.Batch) {
					if !with {
						shard.QueueLocalSetting(b, set)
						shard.QueueLocalSetting(b, second)
					}
					b.Queue("select current_setting('pg_trgm.word_similarity_threshold'), " +
						"current_setting('pg_trgm.similarity_threshold')").
						QueryRow(func(r pgx.Row) error { return r.Scan(&inside, &insideSecond) })
				}
				if with {
					err = shard.ReadWith(ctx, uuid.New(), []tenant.LocalSetting{set, second}, read)
				} else {
					err = shard.Read(ctx, uuid.New(), read)
				}
				if err != nil {
					t.Fatal(err)
				}
				if inside != "0.25" || insideSecond != "0.15" {
					t.Errorf("inside the Read the settings are %q and %q", inside, insideSecond)
				}
				var after *string
				err = pool.QueryRow(ctx, "select current_setting('pg_trgm.word_similarity_threshold', true)").Scan(&after)
				if err != nil {
					t.Fatal(err)
				}
				if after != nil && *after == "0.25" {
					t.Error("the setting outlived its Read")
				}
				want := "select set_config("
				if with {
					want = "select set_config('pmapi.workspace_id', $1, true), set_config($2, $3, true), set_config($4, $5, true)"
				}
				if mode == tenant.SetLocal {
					want = "set local pg_trgm.word_similarity_threshold = '0.25'"
				}
				if !sent.sent(want) {
					t.Errorf("sent %q; want a statement starting %q", sent.sql, want)
				}
			})
		}
	}
}
