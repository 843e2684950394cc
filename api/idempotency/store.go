// Package idempotency stores Idempotency-Key records: the first request with a
// key runs, later ones with the same key and body get its stored response, and
// a different body under the same key is refused. Records are per app and kept
// 24 hours.
package idempotency

import (
	"context"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

// Window is how long a key is remembered.
const Window = 24 * time.Hour

// abandonAfter is when an IN_FLIGHT record is presumed left by a crashed request
// and may be taken over.
const abandonAfter = 5 * time.Minute

// Outcome is what to do with a request that carries a key.
type Outcome int

const (
	// Proceed: run the request, then Finish or Abandon.
	Proceed Outcome = iota
	// Replay: answer with the stored response.
	Replay
	// InFlight: the first request with this key is still running.
	InFlight
	// Mismatch: the key was used with another request body.
	Mismatch
)

// Response is a stored answer.
type Response struct {
	Status int
	Body   []byte
}

// Scope identifies whose key it is.
type Scope struct {
	Shard     *tenant.Shard
	Workspace uuid.UUID
	ClientID  string
}

// Begin claims key for a request whose method, path and body hash to reqHash.
func Begin(ctx context.Context, s Scope, key string, reqHash []byte) (Outcome, Response, error) {
	var outcome Outcome
	var resp Response
	err := s.Shard.Tx(ctx, s.Workspace, func(tx pgx.Tx) error {
		outcome, resp = Proceed, Response{} // a retried transaction decides afresh
		tag, err := tx.Exec(ctx, `insert into idempotency_keys (workspace_id, client_id, key, request_hash)
			values ($1, $2, $3, $4) on conflict do nothing`, s.Workspace, s.ClientID, key, reqHash)
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		var (
			storedHash []byte
			status     string
			code       *int
			body       []byte
			createdAt  time.Time
		)
		err = tx.QueryRow(ctx, `select request_hash, status, response_status, response_body, created_at from idempotency_keys
			where workspace_id = $1 and client_id = $2 and key = $3 for update`, s.Workspace, s.ClientID, key).
			Scan(&storedHash, &status, &code, &body, &createdAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // deleted between the two statements: run it
		}
		if err != nil {
			return err
		}
		age := time.Since(createdAt)
		switch {
		case age > Window || (status == "IN_FLIGHT" && age > abandonAfter):
			_, err = tx.Exec(ctx, `update idempotency_keys set request_hash = $4, status = 'IN_FLIGHT', response_status = null,
				response_body = null, created_at = now() where workspace_id = $1 and client_id = $2 and key = $3`,
				s.Workspace, s.ClientID, key, reqHash)
			return err
		case subtle.ConstantTimeCompare(storedHash, reqHash) != 1:
			outcome = Mismatch
		case status == "IN_FLIGHT":
			outcome = InFlight
		default:
			outcome, resp = Replay, Response{Status: *code, Body: body}
		}
		return nil
	})
	return outcome, resp, err
}

// Finish stores the response of a request that ran.
func Finish(ctx context.Context, s Scope, key string, resp Response) error {
	return s.Shard.Tx(ctx, s.Workspace, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `update idempotency_keys set status = 'DONE', response_status = $4, response_body = $5
			where workspace_id = $1 and client_id = $2 and key = $3`, s.Workspace, s.ClientID, key, resp.Status, resp.Body)
		return err
	})
}

// Abandon forgets a key whose request failed on the server's side, so a retry
// with the same key runs again.
func Abandon(ctx context.Context, s Scope, key string) error {
	return s.Shard.Tx(ctx, s.Workspace, func(tx pgx.Tx) error {
		_, err := tx.Exec(
			ctx,
			`delete from idempotency_keys where workspace_id = $1 and client_id = $2 and key = $3`,
			s.Workspace,
			s.ClientID,
			key,
		)
		return err
	})
}
