package tenant

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Shard is one ordinary PostgreSQL database holding whole workspaces, or one
// Citus cluster (its coordinator's database) whose workspaces Route sends to
// the nodes that hold them.
type Shard struct {
	Name string
	// Pool is the shard's own: the PostgreSQL server, or the Citus
	// coordinator (the directory, River's periodic jobs, DDL).
	Pool   *pgxpool.Pool
	mode   SettingMode
	router *router
}

// NewShard wraps a pool connected as the server's role.
func NewShard(name string, pool *pgxpool.Pool, mode SettingMode) *Shard {
	return &Shard{Name: name, Pool: pool, mode: mode}
}

// Read sends the workspace setting and whatever queue adds (with QueuedQuery
// callbacks reading the results) as one batch: one round trip, one implicit
// transaction, so the setting covers every query and ends with it.
//
// On Citus a workspace isolate or move can switch the placement under a
// read (placementMoved); the batch is then sent again, built by a fresh call
// of queue, as long as none of its callbacks has yet taken a result (they may
// accumulate rather than assign). Otherwise, or when the placement still
// changes after the reruns, the read fails with SERVICE_UNAVAILABLE (503).
func (s *Shard) Read(ctx context.Context, workspace uuid.UUID, queue func(b *pgx.Batch)) error {
	return s.ReadWith(ctx, workspace, nil, queue)
}

// ReadWith is Read with sets in force too until the read's transaction
// ends. In SetConfig mode they go in the statement that binds the workspace,
// a statement fewer each for pgx and for PostgreSQL than QueueLocalSetting's;
// in SetLocal mode each is QueueLocalSetting's SET LOCAL.
func (s *Shard) ReadWith(
	ctx context.Context,
	workspace uuid.UUID,
	sets []LocalSetting,
	queue func(b *pgx.Batch),
) error {
	return s.batch(ctx, workspace, sets, false, queue)
}

// batch sends a read's or a write's batch (Read, Batch), running it again
// after a placement change; hold takes a routed shard's placement lock (a
// write's, SettingMode.queueSetting).
func (s *Shard) batch(ctx context.Context, workspace uuid.UUID, sets []LocalSetting, hold bool,
	queue func(b *pgx.Batch)) error {
	for attempt := 1; ; attempt++ {
		delivered, err := s.read(ctx, workspace, sets, hold, queue)
		code, moved := movedCode(err)
		if !moved {
			return DBError(err)
		}
		s.forget(workspace)
		if delivered || attempt == maxTxAttempts {
			return errMoving(err)
		}
		txRetries.WithLabelValues(code).Inc()
		if sleepBeforeRetry(ctx, attempt) != nil {
			return errMoving(err)
		}
	}
}

// read sends one batch and reports whether any of queue's callbacks took a
// result successfully.
func (s *Shard) read(ctx context.Context, workspace uuid.UUID, sets []LocalSetting, hold bool,
	queue func(b *pgx.Batch)) (delivered bool, err error) {
	b := &pgx.Batch{}
	switch {
	case s.mode == SetLocal:
		// SET LOCAL needs a real transaction block; it still travels in one batch.
		b.Queue("begin")
		s.mode.queueSetting(b, workspace, hold && s.router != nil)
		for _, set := range sets {
			s.QueueLocalSetting(b, set)
		}
	case len(sets) > 0:
		queueSettingWith(b, workspace, sets)
	default:
		s.mode.queueSetting(b, workspace, false)
	}
	first := len(b.QueuedQueries)
	queue(b)
	for _, q := range b.QueuedQueries[first:] {
		fn := q.Fn
		q.Fn = func(br pgx.BatchResults) error {
			var err error
			if fn != nil {
				err = fn(br)
			} else {
				_, err = br.Exec()
			}
			delivered = delivered || err == nil
			return err
		}
	}
	if s.mode == SetLocal {
		b.Queue("commit")
	}
	return delivered, s.pool(ctx, workspace).SendBatch(ctx, b).Close()
}

// Batch is Read for writes whose statements need no Go between them: the
// setting and every statement travel in one round trip and commit together or
// not at all (a failed statement rolls back the ones before it). Unlike Tx it
// does not run again on a deadlock; the caller decides. Like Read, it runs
// again after a Citus placement change, which ran none of its statements.
func (s *Shard) Batch(ctx context.Context, workspace uuid.UUID, queue func(b *pgx.Batch)) error {
	return s.batch(ctx, workspace, nil, true, queue)
}

// BatchWith is Batch with sets in force too, the way ReadWith has them.
func (s *Shard) BatchWith(
	ctx context.Context,
	workspace uuid.UUID,
	sets []LocalSetting,
	queue func(b *pgx.Batch),
) error {
	return s.batch(ctx, workspace, sets, true, queue)
}

// Tx runs fn in a transaction bound to workspace. BEGIN and the setting share one
// round trip; fn's error (or a panic) rolls everything back, including River jobs
// fn inserted with InsertTx.
//
// A transaction that loses a deadlock or a serialization conflict is run again
// from the start, a few times at most: on Citus two transactions that touch the
// same workspace's rows on a worker can be chosen as a distributed deadlock's
// victim where one server would have queued them; and a workspace isolate or
// move can switch the placement under a statement (placementMoved). So fn must be safe to call more
// than once: it starts from its arguments, not from what an earlier call left in
// variables outside it. Nothing has reached the client while Tx runs. A run
// that failed before anything reached the server (a pooled connection the
// server had closed, as after its restart) is run again the same way.
//
// Its error is mapped by DBError.
func (s *Shard) Tx(ctx context.Context, workspace uuid.UUID, fn func(tx pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := s.tx(ctx, workspace, fn)
		code, retry := retryable(err)
		_, moved := movedCode(err)
		if moved {
			s.forget(workspace)
		}
		if !retry || attempt == maxTxAttempts {
			if moved {
				return errMoving(err)
			}
			return DBError(err)
		}
		txRetries.WithLabelValues(code).Inc()
		if sleepBeforeRetry(ctx, attempt) != nil {
			return DBError(err)
		}
	}
}

func (s *Shard) tx(ctx context.Context, workspace uuid.UUID, fn func(tx pgx.Tx) error) (err error) {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	s.mode.queueSetting(b, workspace, s.router != nil)
	br := s.pool(ctx, workspace).SendBatch(ctx, b)
	if err := br.Close(); err != nil {
		if tx := br.Tx(); tx != nil {
			_ = tx.Rollback(ctx)
		}
		return err
	}
	tx := br.Tx()
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Shards maps shard names to shards; one is the default, where new workspaces go
// and where the directory lives.
type Shards struct {
	byName  map[string]*Shard
	Default *Shard
}

// NewShards builds the map; def must be one of shards.
func NewShards(def string, shards ...*Shard) (*Shards, error) {
	m := &Shards{byName: map[string]*Shard{}}
	for _, s := range shards {
		if _, dup := m.byName[s.Name]; dup {
			return nil, fmt.Errorf("shard %q configured twice", s.Name)
		}
		m.byName[s.Name] = s
	}
	d, ok := m.byName[def]
	if !ok {
		return nil, fmt.Errorf("default shard %q is not configured", def)
	}
	m.Default = d
	return m, nil
}

// ErrUnknownShard means the directory names a shard this process has no pool for.
var ErrUnknownShard = errors.New("unknown shard")

// Get returns the named shard.
func (m *Shards) Get(name string) (*Shard, error) {
	s, ok := m.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownShard, name)
	}
	return s, nil
}

// All returns every shard in name order.
func (m *Shards) All() []*Shard {
	out := make([]*Shard, 0, len(m.byName))
	for _, s := range m.byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Close closes every shard's pool, and a routed shard's node pools.
func (m *Shards) Close() {
	for _, s := range m.byName {
		s.StopRouting()
		s.Pool.Close()
	}
}
