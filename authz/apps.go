package authz

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/quota"
	"github.com/pmapi/pmapi/tenant"
)

// App statuses.
const (
	AppActive   = "ACTIVE"
	AppDisabled = "DISABLED"
)

// App is the container for API access: keys, webhooks and OAuth grants belong to
// it. Its client id never changes; its secret and keys rotate.
type App struct {
	WorkspaceID        uuid.UUID
	ClientID           string
	Name               string
	Description        *string
	Scopes             Scopes
	Status             string
	SecretPrefix       string
	RateLimitPerMinute *int
	CreatedAt          time.Time
	UpdatedAt          time.Time
	DisabledAt         *time.Time
}

const appColumns = `workspace_id, client_id, name, description, scopes, status, secret_prefix,
	rate_limit_per_minute, created_at, updated_at, disabled_at`

func scanApp(row pgx.Row) (App, error) {
	var a App
	var scopes []string
	err := row.Scan(&a.WorkspaceID, &a.ClientID, &a.Name, &a.Description, &scopes, &a.Status, &a.SecretPrefix,
		&a.RateLimitPerMinute, &a.CreatedAt, &a.UpdatedAt, &a.DisabledAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, pmapi.NotFound("app")
	}
	a.Scopes = scopesFromDB(scopes)
	return a, err
}

// ValidateName trims and checks the name of an app or a key.
func ValidateName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n < 1 || n > 200 {
		return "", pmapi.Invalid("name", "name must be 1 to 200 characters")
	}
	return name, nil
}

// ValidateAppDescription allows an app up to 2000 characters.
func ValidateAppDescription(d *string) error {
	if d != nil && utf8.RuneCountInString(*d) > 2000 {
		return pmapi.Invalid("description", "description must be at most 2000 characters")
	}
	return nil
}

// NewApp is what app creation needs.
type NewApp struct {
	Name        string
	Description *string
	Scopes      Scopes
	CreatedBy   uuid.UUID
}

// CreateApp registers the app's client id in the directory, then writes the app on
// the workspace's shard, within the workspace's apps quota. If the shard write
// fails the directory entry is removed, so no client id points at nothing. The
// secret is returned once.
func CreateApp(
	ctx context.Context,
	dir *tenant.Directory,
	shard *tenant.Shard,
	ws uuid.UUID,
	in NewApp,
) (App, string, error) {
	clientID := pmapi.NewClientID()
	secret := NewAppSecret()
	if err := dir.RegisterClient(ctx, clientID, ws); err != nil {
		return App{}, "", err
	}
	var app App
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		err := quota.Hold(ctx, tx, ws, quota.Apps, func() (n int64, err error) {
			err = tx.QueryRow(ctx, "select count(*) from apps where workspace_id = $1", ws).Scan(&n)
			return n, err
		})
		if err != nil {
			return err
		}
		app, err = scanApp(
			tx.QueryRow(
				ctx,
				`insert into apps (workspace_id, client_id, name, description, scopes, secret_hash, secret_prefix, created_by)
			values ($1, $2, $3, $4, $5, $6, $7, $8) returning `+appColumns,
				ws,
				clientID,
				in.Name,
				in.Description,
				in.Scopes.Names(),
				hashSecret(secret),
				secret[:secretDisplayPrefix],
				in.CreatedBy,
			),
		)
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.AppCreated, appTarget(clientID))
	})
	if err != nil {
		_ = dir.UnregisterClient(context.WithoutCancel(ctx), clientID)
		return App{}, "", err
	}
	return app, secret, nil
}

// GetApp returns one app of workspace ws.
func GetApp(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string) (App, error) {
	var app App
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select "+appColumns+" from apps where workspace_id = $1 and client_id = $2", ws, clientID).
			QueryRow(func(row pgx.Row) (err error) { app, err = scanApp(row); return err })
	})
	return app, err
}

// ListApps pages through the workspace's apps in client id order.
func ListApps(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, after string, limit int) ([]App, error) {
	var apps []App
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select "+appColumns+` from apps
			where workspace_id = $1 and client_id > $2 order by client_id limit $3`, ws, after, limit).
			Query(func(rows pgx.Rows) (err error) { apps, err = collect(rows, scanApp); return err })
	})
	return apps, err
}

// collect reads every row with scan.
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (T, error)) ([]T, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

// AppPatch holds the fields an app update may change; nil leaves a field alone.
type AppPatch struct {
	Name        *string
	Description **string // set to a nil *string to clear the description
	Status      *string
	Scopes      *Scopes
	// Check, when set, sees the locked app before anything is written and
	// may refuse the change: the console's If-Match, which this package
	// cannot compare itself (the app's representation is the API's).
	Check func(App) error
}

// UpdateApp applies patch. Changes that affect authentication (status, scopes)
// tell every instance to drop cached credentials of the app.
func UpdateApp(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string, p AppPatch) (App, error) {
	var app App
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		var err error
		if app, err = appForUpdate(ctx, tx, ws, clientID); err != nil {
			return err
		}
		if p.Check != nil {
			if err := p.Check(app); err != nil {
				return err
			}
		}
		if p.Name != nil {
			app.Name = *p.Name
		}
		if p.Description != nil {
			app.Description = *p.Description
		}
		if p.Scopes != nil {
			app.Scopes = *p.Scopes
		}
		action := audit.AppUpdated
		if p.Status != nil && *p.Status != app.Status {
			app.Status = *p.Status
			if app.Status == AppDisabled {
				action = audit.AppDisabled
			}
		}
		// Go decides disabled_at from the locked row (Citus refuses now() in
		// CASE or COALESCE of an UPDATE): an app disabled again keeps the time
		// it was first disabled.
		disabledAt := "null"
		if app.Status == AppDisabled {
			disabledAt = "disabled_at"
			if app.DisabledAt == nil {
				disabledAt = "now()"
			}
		}
		app, err = changeAppTx(ctx, tx, ws, clientID, action, `update apps set name = $3, description = $4, scopes = $5,
			status = $6, disabled_at = `+disabledAt+`, updated_at = now()`+appWhere,
			app.Name, app.Description, app.Scopes.Names(), app.Status)
		return err
	})
	return app, err
}

// appWhere ends every update of one app: $1 and $2 are the workspace and
// the app. Callers write whole statements so that each can be checked as
// written (internal/sqlcheck).
const appWhere = " where workspace_id = $1 and client_id = $2 returning " + appColumns

// appForUpdate reads the app and locks its row for a change of it.
func appForUpdate(ctx context.Context, tx pgx.Tx, ws uuid.UUID, clientID string) (App, error) {
	return scanApp(tx.QueryRow(ctx,
		"select "+appColumns+" from apps where workspace_id = $1 and client_id = $2 for update", ws, clientID))
}

// changeAppTx runs one update of the app inside tx, records it in the audit
// log as action and tells every instance to drop the app's credentials from
// its cache.
func changeAppTx(
	ctx context.Context,
	tx pgx.Tx,
	ws uuid.UUID,
	clientID, action, sql string,
	args ...any,
) (App, error) {
	app, err := scanApp(tx.QueryRow(ctx, sql, append([]any{ws, clientID}, args...)...))
	if err != nil {
		return app, err
	}
	if err := audit.Record(ctx, tx, ws, action, appTarget(clientID)); err != nil {
		return app, err
	}
	return app, tenant.Invalidate(ctx, tx, tenant.ClientChanged(clientID))
}

// changeApp is changeAppTx in a transaction of its own.
func changeApp(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID, action, sql string,
	args ...any,
) (App, error) {
	var app App
	err := shard.Tx(ctx, ws, func(tx pgx.Tx) (err error) {
		app, err = changeAppTx(ctx, tx, ws, clientID, action, sql, args...)
		return err
	})
	return app, err
}

// appTarget names an app in the audit log.
func appTarget(clientID string) audit.Target { return audit.Target{Type: "app", ID: clientID} }

// SetRateLimit sets or clears (nil) the app's per-key rate limit override.
func SetRateLimit(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	perMinute *int,
) (App, error) {
	if perMinute != nil && (*perMinute < 1 || *perMinute > 1000000) {
		return App{}, pmapi.Invalid("perMinute", "perMinute must be from 1 to 1000000, or null for the default")
	}
	return changeApp(ctx, shard, ws, clientID, audit.AppRateLimitSet,
		"update apps set rate_limit_per_minute = $3, updated_at = now()"+appWhere, perMinute)
}

// RotateAppSecret replaces the app's secret and returns the new one, once.
func RotateAppSecret(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID string) (App, string, error) {
	secret := NewAppSecret()
	app, err := changeApp(ctx, shard, ws, clientID, audit.AppSecretRotated,
		"update apps set secret_hash = $3, secret_prefix = $4, updated_at = now()"+appWhere,
		hashSecret(secret), secret[:secretDisplayPrefix])
	return app, secret, err
}

// VerifyAppSecret checks an app's secret in constant time (OAuth client auth).
func VerifyAppSecret(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, clientID, secret string) (bool, error) {
	var stored []byte
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select secret_hash from apps where workspace_id = $1 and client_id = $2", ws, clientID).
			QueryRow(func(row pgx.Row) error {
				err := row.Scan(&stored)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				return err
			})
	})
	if err != nil || stored == nil {
		return false, err
	}
	return sameHash(stored, hashSecret(secret)), nil
}

// AppInUse reports whether the app still has something active of a kind
// another package owns (webhook subscriptions), asked inside the delete's
// transaction. Each owner runs the SQL of its own table.
type AppInUse func(ctx context.Context, tx pgx.Tx, ws uuid.UUID, clientID string) (bool, error)

// ownInUse lists authz's own checks that keep an app from being deleted: live
// API keys and OAuth grants.
var ownInUse = []string{
	`select exists(select 1 from api_keys where workspace_id = $1 and client_id = $2
		and revoked_at is null and (expires_at is null or expires_at > now()))`,
	`select exists(select 1 from oauth_grants where workspace_id = $1 and client_id = $2 and revoked_at is null)`,
}

// DeleteApp removes the app when nothing active hangs on it (its keys and
// grants, and whatever inUse reports), and otherwise disables it (the spec's
// rule). removed tells which happened.
func DeleteApp(
	ctx context.Context,
	dir *tenant.Directory,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	inUse ...AppInUse,
) (app App, removed bool, err error) {
	err = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		removed = false
		if app, err = appForUpdate(ctx, tx, ws, clientID); err != nil {
			return err
		}
		active, err := appActive(ctx, tx, ws, clientID, inUse)
		if err != nil {
			return err
		}
		if active {
			// Go keeps the first disabled_at (Citus refuses now() in COALESCE
			// of an UPDATE).
			disabledAt := "disabled_at"
			if app.DisabledAt == nil {
				disabledAt = "now()"
			}
			app, err = scanApp(tx.QueryRow(ctx,
				"update apps set status = 'DISABLED', disabled_at = "+disabledAt+", updated_at = now()"+appWhere, ws, clientID))
			if err != nil {
				return err
			}
		} else {
			if _, err := tx.Exec(ctx, "delete from apps where workspace_id = $1 and client_id = $2", ws, clientID); err != nil {
				return err
			}
			removed = true
		}
		action := audit.AppDisabled
		if removed {
			action = audit.AppDeleted
		}
		if err := audit.Record(ctx, tx, ws, action, appTarget(clientID)); err != nil {
			return err
		}
		return tenant.Invalidate(ctx, tx, tenant.ClientChanged(clientID))
	})
	if err == nil && removed {
		err = dir.UnregisterClient(ctx, clientID)
	}
	return app, removed, err
}

func appActive(ctx context.Context, tx pgx.Tx, ws uuid.UUID, clientID string, others []AppInUse) (bool, error) {
	for _, q := range ownInUse {
		var active bool
		if err := tx.QueryRow(ctx, q, ws, clientID).Scan(&active); err != nil || active {
			return active, err
		}
	}
	for _, check := range others {
		if active, err := check(ctx, tx, ws, clientID); err != nil || active {
			return active, err
		}
	}
	return false, nil
}

// ReadUnderApp is shard.Read for rows of the app clientID (its keys, its
// webhook subscriptions): the check that the workspace has the app runs in
// the same round trip, and when it has not the read is the app's not-found
// rather than an empty answer.
func ReadUnderApp(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	clientID string,
	queue func(b *pgx.Batch),
) error {
	found := false
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(appExistsSQL, ws, clientID).QueryRow(func(r pgx.Row) error { return r.Scan(&found) })
		queue(b)
	})
	if err == nil && !found {
		return pmapi.NotFound("app")
	}
	return err
}

// AppExists tells, in tx, whether the workspace has the app clientID.
func AppExists(ctx context.Context, tx pgx.Tx, ws uuid.UUID, clientID string) (bool, error) {
	var ok bool
	err := tx.QueryRow(ctx, appExistsSQL, ws, clientID).Scan(&ok)
	return ok, err
}

const appExistsSQL = "select exists(select 1 from apps where workspace_id = $1 and client_id = $2)"

// QuotaUse counts what the apps and keysPerApp quotas limit in workspace ws:
// its apps, and the live keys (neither revoked nor expired) of its app that
// has the most.
func QuotaUse(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (apps, keysPerApp int64, err error) {
	err = shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select count(*) from apps where workspace_id = $1", ws).
			QueryRow(func(row pgx.Row) error { return row.Scan(&apps) })
		b.Queue(`select coalesce(max(n), 0) from (select count(*) as n from api_keys where workspace_id = $1
			and revoked_at is null and (expires_at is null or expires_at > now()) group by client_id) k`, ws).
			QueryRow(func(row pgx.Row) error { return row.Scan(&keysPerApp) })
	})
	return apps, keysPerApp, err
}
