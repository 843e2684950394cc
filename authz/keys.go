package authz

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/quota"
	"github.com/pmapi/pmapi/tenant"
)

// Key is an API key record. Its value is returned only by CreateKey and
// RegenerateKey; only its SHA-256 is stored.
type Key struct {
	ID         uuid.UUID
	ClientID   string
	Name       string
	Prefix     string
	LastFour   string
	Scopes     Scopes
	ExpiresAt  *time.Time
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// KeyIDPrefix starts key ids in the API.
const KeyIDPrefix = "key_"

// MaxGrace bounds how long a regenerated key's old value keeps working.
const MaxGrace = 24 * time.Hour

// DefaultRenewal is how far renew moves expiresAt when no date is given.
const DefaultRenewal = 90 * 24 * time.Hour

const keyColumns = "id, client_id, name, prefix, last_four, scopes, expires_at, created_at, last_used_at, revoked_at"

func scanKey(row pgx.Row) (Key, error) {
	var k Key
	var scopes []string
	err := row.Scan(
		&k.ID,
		&k.ClientID,
		&k.Name,
		&k.Prefix,
		&k.LastFour,
		&scopes,
		&k.ExpiresAt,
		&k.CreatedAt,
		&k.LastUsedAt,
		&k.RevokedAt,
	)
	if errors.Is(err, pgx.ErrNoRows) {
		return k, pmapi.NotFound("key")
	}
	k.Scopes = scopesFromDB(scopes)
	return k, err
}

// lockApp loads the app for a key operation, so a key is never created for (or
// moved under) an app of another workspace or one being deleted.
func lockApp(ctx context.Context, tx pgx.Tx, ws uuid.UUID, clientID string) (App, error) {
	return scanApp(
		tx.QueryRow(
			ctx,
			"select "+appColumns+" from apps where workspace_id = $1 and client_id = $2 for share",
			ws,
			clientID,
		),
	)
}

// NewKey is what key creation needs.
type NewKey struct {
	Name      string
	Scopes    Scopes
	ExpiresAt *time.Time
}

// CreateKey issues a key for the app. Its scopes must be within the app's declared
// scopes (SCOPE_NOT_ALLOWED otherwise, and nothing is written), and the app's
// live keys (neither revoked nor expired) within the keysPerApp quota.
func CreateKey(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	in NewKey,
) (Key, string, error) {
	if in.ExpiresAt != nil && !in.ExpiresAt.After(time.Now()) {
		return Key{}, "", pmapi.Invalid("expiresAt", "expiresAt must be in the future")
	}
	value := NewAPIKey()
	var key Key
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		app, err := lockApp(ctx, tx, ws, clientID)
		if err != nil {
			return err
		}
		if !app.Scopes.Has(in.Scopes) {
			return pmapi.Errorf(pmapi.CodeScopeNotAllowed,
				"the app does not declare every scope asked for; declare them on the app first").
				With("field", "scopes").
				With("notAllowed", app.Scopes.Missing(in.Scopes)).
				With("allowed", app.Scopes.Names())
		}
		err = quota.Hold(ctx, tx, ws, quota.KeysPerApp, func() (n int64, err error) {
			err = tx.QueryRow(ctx, `select count(*) from api_keys where workspace_id = $1 and client_id = $2
				and revoked_at is null and (expires_at is null or expires_at > now())`, ws, clientID).Scan(&n)
			return n, err
		})
		if err != nil {
			return err
		}
		key, err = scanKey(
			tx.QueryRow(
				ctx,
				`insert into api_keys (workspace_id, id, client_id, name, prefix, last_four, hash, scopes, expires_at)
			values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning `+keyColumns,
				ws,
				pmapi.NewID(),
				clientID,
				in.Name,
				value[:KeyDisplayPrefix],
				value[len(value)-4:],
				hashSecret(value),
				in.Scopes.Names(),
				in.ExpiresAt,
			),
		)
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.KeyCreated, keyTarget(key.ID))
	})
	if err != nil {
		return Key{}, "", err
	}
	return key, value, nil
}

// ListKeys pages through an app's keys, newest last (ids are time-ordered).
func ListKeys(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	after uuid.UUID,
	limit int,
) ([]Key, error) {
	var keys []Key
	err := ReadUnderApp(ctx, shard, ws, clientID, func(b *pgx.Batch) {
		b.Queue("select "+keyColumns+` from api_keys
			where workspace_id = $1 and client_id = $2 and id > $3 order by id limit $4`,
			ws, clientID, after, limit).
			Query(func(rows pgx.Rows) (err error) { keys, err = collect(rows, scanKey); return err })
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}

// keyWhere ends every update changeKey runs: $1 to $3 are the workspace, the
// app and the key. Callers write whole statements so that each can be checked
// as written (internal/sqlcheck).
const keyWhere = " where workspace_id = $1 and client_id = $2 and id = $3 returning " + keyColumns

// changeKey runs one update on a key of the app inside a transaction that also
// records it in the audit log as action and tells every instance to drop the
// key from its cache.
func changeKey(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
	allowRevoked bool,
	action, sql string,
	args ...any,
) (Key, error) {
	var key Key
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		if _, err := lockApp(ctx, tx, ws, clientID); err != nil {
			return err
		}
		current, err := scanKey(
			tx.QueryRow(
				ctx,
				"select "+keyColumns+" from api_keys where workspace_id = $1 and client_id = $2 and id = $3 for update",
				ws,
				clientID,
				id,
			),
		)
		if err != nil {
			return err
		}
		if current.RevokedAt != nil && !allowRevoked {
			return pmapi.Errorf(pmapi.CodeConflict, "the key is revoked")
		}
		all := append([]any{ws, clientID, id}, args...)
		if key, err = scanKey(tx.QueryRow(ctx, sql, all...)); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, ws, action, keyTarget(id)); err != nil {
			return err
		}
		return tenant.Invalidate(ctx, tx, tenant.KeyChanged(id))
	})
	return key, err
}

// RenameKey changes a key's name (revoked keys too: names are for people).
func RenameKey(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
	name string,
) (Key, error) {
	return changeKey(ctx, shard, ws, clientID, id, true, audit.KeyRenamed, "update api_keys set name = $4"+keyWhere, name)
}

// RenewKey moves expiresAt to the date given. Without one it extends the key
// to DefaultRenewal from now and never shortens it: a later expiry stays, and
// so does a key that never expires.
func RenewKey(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
	expiresAt *time.Time,
) (Key, error) {
	sql, until := "update api_keys set expires_at = $4"+keyWhere, time.Now().Add(DefaultRenewal)
	switch {
	case expiresAt == nil:
		// The default renewal never shortens: a later expiry, or none, stays.
		sql = "update api_keys set expires_at = " +
			"case when expires_at is null then null else greatest(expires_at, $4::timestamptz) end" + keyWhere
	case !expiresAt.After(time.Now()):
		return Key{}, pmapi.Invalid("expiresAt", "expiresAt must be in the future")
	default:
		until = *expiresAt
	}
	return changeKey(ctx, shard, ws, clientID, id, false, audit.KeyRenewed, sql, until)
}

// RevokeKey sets revokedAt; the record stays for audit.
func RevokeKey(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, id uuid.UUID) (Key, error) {
	return changeKey(
		ctx,
		shard,
		ws,
		clientID,
		id,
		false,
		audit.KeyRevoked,
		"update api_keys set revoked_at = now(), previous_hash = null, previous_expires_at = null"+keyWhere,
	)
}

// RegenerateKey gives the key record a new value, returned once. The old value
// stops at once, or after grace (at most MaxGrace) when grace is positive.
func RegenerateKey(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	id uuid.UUID,
	grace time.Duration,
) (Key, string, error) {
	if grace < 0 || grace > MaxGrace {
		return Key{}, "", pmapi.Invalid("graceSeconds", "graceSeconds must be from 0 to 86400")
	}
	value := NewAPIKey()
	var previousUntil *time.Time
	if grace > 0 {
		t := time.Now().Add(grace)
		previousUntil = &t
	}
	key, err := changeKey(ctx, shard, ws, clientID, id, false, audit.KeyRegenerated, `update api_keys set
		previous_hash = case when $7::timestamptz is null then null else hash end, previous_expires_at = $7,
		hash = $4, prefix = $5, last_four = $6`+keyWhere,
		hashSecret(value), value[:KeyDisplayPrefix], value[len(value)-4:], previousUntil)
	if err != nil {
		return Key{}, "", err
	}
	return key, value, nil
}

// keyTarget names a key in the audit log as the API shows its id.
func keyTarget(id uuid.UUID) audit.Target {
	return audit.Target{Type: "key", ID: pmapi.FormatID(KeyIDPrefix, id)}
}
