package console

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// The server's half of a sign-in under way (console_sign_ins, migration
// 0018): rows keyed by the SHA-256 of a random value the browser holds, in
// the directory's database so that any instance can finish what another
// began. take deletes the row it reads: a value works once.

const (
	kindLogin = "LOGIN" // an authorization request: nonce, PKCE verifier, return_to
	kindPick  = "PICK"  // a verified email choosing among its workspaces
)

// put stores data for ttl and returns the browser's half.
func (cn *Console) put(ctx context.Context, kind string, data any, ttl time.Duration) (string, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return "", err
	}
	key := pmapi.RandomBase62(43)
	hash := sha256.Sum256([]byte(key))
	pool := cn.cfg.Directory.Pool()
	// Old rows go as new ones come: a sign-in that was never finished.
	if _, err := pool.Exec(ctx, `delete from console_sign_ins where expires_at < now() - interval '1 hour'`); err != nil {
		return "", tenant.DBError(err)
	}
	_, err = pool.Exec(ctx, `insert into console_sign_ins (key_hash, kind, data, expires_at) values ($1, $2, $3, $4)`,
		hash[:], kind, raw, time.Now().Add(ttl))
	return key, tenant.DBError(err)
}

// errSpent is a value that was used already, expired or never existed.
var errSpent = errors.New("console: sign-in value spent or unknown")

// take reads and removes the row of key; errSpent when there is none that
// has not expired.
func (cn *Console) take(ctx context.Context, kind, key string, into any) error {
	if key == "" || len(key) > 100 {
		return errSpent
	}
	hash := sha256.Sum256([]byte(key))
	var raw []byte
	var live bool
	// The time is a parameter: Citus refuses a non-immutable function such
	// as now() in a RETURNING clause.
	err := cn.cfg.Directory.Pool().QueryRow(ctx, `delete from console_sign_ins where key_hash = $1 and kind = $2
		returning data, expires_at > $3`, hash[:], kind, time.Now()).Scan(&raw, &live)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !live {
		return errSpent
	}
	if err != nil {
		return tenant.DBError(err)
	}
	return json.Unmarshal(raw, into)
}

// peek reads the row of key without removing it.
func (cn *Console) peek(ctx context.Context, kind, key string, into any) error {
	if key == "" || len(key) > 100 {
		return errSpent
	}
	hash := sha256.Sum256([]byte(key))
	var raw []byte
	err := cn.cfg.Directory.Pool().QueryRow(ctx, `select data from console_sign_ins
		where key_hash = $1 and kind = $2 and expires_at > now()`, hash[:], kind).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return errSpent
	}
	if err != nil {
		return tenant.DBError(err)
	}
	return json.Unmarshal(raw, into)
}
