package authz

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/tenant"
)

// User is a person of one workspace who signs in to the console.
type User struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Email       string
	Name        string
	CreatedAt   time.Time
}

// Session is a console sign-in; its secret value (the sid cookie) is only ever
// returned by IssueSession.
type Session struct {
	ID        uuid.UUID
	UserID    uuid.UUID
	CreatedAt time.Time
	ExpiresAt time.Time
}

// SessionPrefix starts every sid value so leaked ones are recognisable.
const SessionPrefix = "pms_"

// ValidateUser checks a new user's fields before any database work.
func ValidateUser(email, name string) error {
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || len(email) > 320 {
		return pmapi.Invalid("email", "email must be a plain address like ada@example.com")
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(name)); n < 1 || n > 200 {
		return pmapi.Invalid("name", "name must be 1 to 200 characters")
	}
	return nil
}

// CreateUser adds a user to workspace ws on its shard.
func CreateUser(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, email, name string) (User, error) {
	if err := ValidateUser(email, name); err != nil {
		return User{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return User{}, err
	}
	u := User{ID: id, WorkspaceID: ws, Email: email, Name: strings.TrimSpace(name)}
	err = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `insert into users (workspace_id, id, email, name) values ($1, $2, $3, $4)
			returning created_at`, ws, id, u.Email, u.Name).
			Scan(&u.CreatedAt)
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.UserInvited, audit.Target{Type: "user", ID: id.String()})
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return User{}, pmapi.Errorf(pmapi.CodeConflict, "a user with this email already exists").With("field", "email")
	}
	return u, err
}

// IssueSession creates a session for user valid for ttl and returns its sid value.
func IssueSession(
	ctx context.Context,
	shard *tenant.Shard,
	ws, user uuid.UUID,
	ttl time.Duration,
) (string, Session, error) {
	if ttl <= 0 || ttl > 90*24*time.Hour {
		return "", Session{}, pmapi.Invalid("ttlSeconds", "session lifetime must be between 1 second and 90 days")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return "", Session{}, err
	}
	sid := SessionPrefix + pmapi.RandomBase62(40)
	s := Session{ID: id, UserID: user}
	err = shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		// A plain VALUES insert after an existence check: INSERT ... SELECT with
		// generated values under RLS is refused by Citus.
		var exists bool
		if err := tx.QueryRow(ctx, "select exists(select 1 from users where workspace_id = $1 and id = $2)", ws, user).
			Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return pmapi.NotFound("user")
		}
		err := tx.QueryRow(ctx, `insert into sessions (workspace_id, id, user_id, token_hash, expires_at)
			values ($1, $2, $3, $4, now() + make_interval(secs => $5)) returning created_at, expires_at`,
			ws, id, user, hashSecret(sid), ttl.Seconds()).Scan(&s.CreatedAt, &s.ExpiresAt)
		if err != nil {
			return err
		}
		return audit.Record(ctx, tx, ws, audit.SessionIssued, audit.Target{Type: "session", ID: id.String()})
	})
	return sid, s, err
}

// VerifySession returns the user a sid belongs to within workspace ws. Unknown,
// revoked and expired sessions are all INVALID_TOKEN (TOKEN_EXPIRED for expiry).
func VerifySession(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, sid string) (User, error) {
	if !strings.HasPrefix(sid, SessionPrefix) || len(sid) != len(SessionPrefix)+40 {
		return User{}, pmapi.Errorf(pmapi.CodeInvalidToken, "session is not valid")
	}
	want := hashSecret(sid)
	var (
		u         User
		stored    []byte
		expiresAt time.Time
		revoked   *time.Time
		found     bool
	)
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select s.token_hash, s.expires_at, s.revoked_at, u.id, u.workspace_id, u.email, u.name, u.created_at
			from sessions s join users u on u.workspace_id = s.workspace_id and u.id = s.user_id
			where s.workspace_id = $1 and s.token_hash = $2`, ws, want).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&stored, &expiresAt, &revoked, &u.ID, &u.WorkspaceID, &u.Email, &u.Name, &u.CreatedAt)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			found = err == nil
			return err
		})
	})
	if err != nil {
		return User{}, err
	}
	if !found || !sameHash(stored, want) || revoked != nil {
		return User{}, pmapi.Errorf(pmapi.CodeInvalidToken, "session is not valid")
	}
	if !time.Now().Before(expiresAt) {
		return User{}, pmapi.Errorf(pmapi.CodeTokenExpired, "session has expired")
	}
	return u, nil
}

// FindUserByEmail returns the user of workspace ws with email (case-insensitive).
func FindUserByEmail(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, email string) (User, error) {
	var u User
	found := false
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select id, workspace_id, email, name, created_at from users
			where workspace_id = $1 and lower(email) = lower($2)`, ws, email).
			QueryRow(func(row pgx.Row) error {
				err := row.Scan(&u.ID, &u.WorkspaceID, &u.Email, &u.Name, &u.CreatedAt)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				found = err == nil
				return err
			})
	})
	if err == nil && !found {
		err = pmapi.NotFound("user")
	}
	return u, err
}

// KnownUsers returns which of ids are users of workspace ws, read in tx.
func KnownUsers(ctx context.Context, tx pgx.Tx, ws uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	rows, err := tx.Query(ctx, "select id from users where workspace_id = $1 and id = any($2)", ws, ids)
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, err
	}
	known := make(map[uuid.UUID]bool, len(found))
	for _, id := range found {
		known[id] = true
	}
	return known, nil
}

// HasUsers tells whether workspace ws has any user on shard: a workspace
// that has none holds no data there yet (tenant.Directory.Place).
func HasUsers(ctx context.Context, shard *tenant.Shard, ws uuid.UUID) (bool, error) {
	var has bool
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select exists(select 1 from users where workspace_id = $1)", ws).QueryRow(func(row pgx.Row) error {
			return row.Scan(&has)
		})
	})
	return has, err
}
