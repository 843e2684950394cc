package pgcluster

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The two roles of DESIGN.md section 3. The owner runs migrations and owns every
// table; the app role is what the server connects as: it owns nothing and has no
// BYPASSRLS, so row-level security always applies to it.
const (
	OwnerRole = "pmapi_owner"
	AppRole   = "pmapi_app"
)

// Database is one provisioned database with a URL per role.
type Database struct {
	Name     string
	OwnerURL string
	AppURL   string
	AdminURL string
}

var dbNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// EnsureRoles creates the two roles when missing. Their passwords are derived from
// the admin URL, so every process that holds it (parallel test packages, a dev
// server restarted) computes the same ones without storing them. On Citus the
// roles exist on every node with the same passwords (the coordinator reaches the
// workers as the client's role), and both roles' SET LOCAL travels to the
// workers, which is how the workspace reaches their row-level security.
func EnsureRoles(ctx context.Context, adminURL string) error {
	top, err := Discover(ctx, adminURL)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect as admin: %w", err)
	}
	defer conn.Close(ctx)
	// Serialise role creation across processes provisioning at the same moment.
	if _, err := conn.Exec(ctx, "select pg_advisory_lock(727274)"); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock(727274)")
	for _, w := range top.Workers {
		wconn, err := pgx.Connect(ctx, w)
		if err != nil {
			return err
		}
		err = ensureRolesOn(ctx, wconn, adminURL, top.Citus)
		wconn.Close(ctx)
		if err != nil {
			return err
		}
	}
	if err := ensureRolesOn(ctx, conn, adminURL, top.Citus); err != nil {
		return err
	}
	if top.Citus {
		// The owner too: tests and operator verbs read tenant rows as the
		// owner, whose tables force row-level security as well.
		for _, role := range []string{AppRole, OwnerRole} {
			alter := fmt.Sprintf("ALTER ROLE %s SET citus.propagate_set_commands = 'local'", role)
			if _, err := conn.Exec(ctx, alter); err != nil {
				return err
			}
		}
	}
	return nil
}

func ensureRolesOn(ctx context.Context, conn *pgx.Conn, adminURL string, citus bool) error {
	if citus {
		// Each node gets its roles here; Citus forwarding them from node to
		// node as well would need passwords a worker does not hold.
		if _, err := conn.Exec(ctx, "set citus.enable_metadata_sync = off"); err != nil {
			return err
		}
	}
	for _, role := range []string{OwnerRole, AppRole} {
		var exists bool
		err := conn.QueryRow(ctx, "select exists(select 1 from pg_roles where rolname = $1)", role).Scan(&exists)
		if err != nil {
			return err
		}
		verb := "ALTER"
		if !exists {
			verb = "CREATE"
		}
		stmt := fmt.Sprintf("%s ROLE %s LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE PASSWORD %s",
			verb, pgx.Identifier{role}.Sanitize(), quoteLiteral(rolePassword(adminURL, role)))
		for attempt := 0; ; attempt++ {
			_, err := conn.Exec(ctx, stmt)
			// Citus rewrites the roles on a worker it joins to a new database,
			// outside the lock above.
			if isConcurrentUpdate(err) && attempt < 10 {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			if err != nil && !isDuplicate(err) {
				return fmt.Errorf("%s role %s: %w", verb, role, err)
			}
			break
		}
	}
	return nil
}

func isConcurrentUpdate(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "XX000" && pgErr.Message == "tuple concurrently updated"
}

// CreateDatabase makes an empty database owned by the owner role, optionally
// cloned from a template (tests clone a migrated template instead of migrating).
// On Citus it is made on every node; an empty one gets the extension everywhere
// and the coordinator's metadata, a clone carries both from its template.
func CreateDatabase(ctx context.Context, adminURL, name, template string) (Database, error) {
	if !dbNameRE.MatchString(name) || (template != "" && !dbNameRE.MatchString(template)) {
		return Database{}, fmt.Errorf("bad database name %q", name)
	}
	top, err := Discover(ctx, adminURL)
	if err != nil {
		return Database{}, err
	}
	stmt := fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, OwnerRole)
	if template != "" {
		stmt += " TEMPLATE " + template
	}
	created := make([]bool, len(top.Nodes()))
	err = onEach(ctx, top.Nodes(), func(ctx context.Context, i int, nodeURL string) error {
		err := execOn(ctx, nodeURL, stmt)
		created[i] = err == nil
		return err
	})
	if err == nil && top.Citus && template == "" {
		err = joinDatabase(ctx, top, name)
	}
	if err != nil {
		// Half a database on a cluster would make the retry fail on the nodes
		// that have it.
		_ = onEach(context.WithoutCancel(ctx), top.Nodes(), func(ctx context.Context, i int, nodeURL string) error {
			if !created[i] {
				return nil
			}
			return dropOn(ctx, nodeURL, name)
		})
		return Database{}, err
	}
	return Describe(adminURL, name)
}

// DatabaseExists reports whether name exists on the server (on Citus, on the
// coordinator).
func DatabaseExists(ctx context.Context, adminURL, name string) (bool, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return false, err
	}
	defer conn.Close(ctx)
	var ok bool
	err = conn.QueryRow(ctx, "select exists(select 1 from pg_database where datname = $1)", name).Scan(&ok)
	return ok, err
}

// DropDatabase removes name from every node, ending any sessions still connected
// to it (Citus's own included).
func DropDatabase(ctx context.Context, adminURL, name string) error {
	if !dbNameRE.MatchString(name) {
		return fmt.Errorf("bad database name %q", name)
	}
	top, err := Discover(ctx, adminURL)
	if err != nil {
		return err
	}
	// The coordinator first: its maintenance daemon for the database keeps
	// connecting to the workers' copies until it is gone.
	if err := dropOn(ctx, top.Coordinator, name); err != nil {
		return err
	}
	return onEach(ctx, top.Workers, func(ctx context.Context, _ int, nodeURL string) error {
		return dropOn(ctx, nodeURL, name)
	})
}

// dropOn drops name on one node. FORCE ends the sessions but refuses while the
// database has prepared transactions: on a Citus worker, those of a two-phase
// commit whose coordinator database is gone, which nothing would ever finish;
// they are rolled back first. FORCE also gives up when new sessions arrive while
// it waits (a Citus daemon reconnecting); again then.
func dropOn(ctx context.Context, nodeURL, name string) error {
	for attempt := 0; ; attempt++ {
		if err := rollbackPrepared(ctx, nodeURL, name); err != nil {
			return err
		}
		err := execOn(ctx, nodeURL, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
		if err == nil || attempt == 10 || !strings.Contains(err.Error(), "being accessed by other users") {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Detail != "" {
				err = fmt.Errorf("%w (%s)", err, pgErr.Detail)
			}
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rollbackPrepared rolls back the prepared transactions of database name, from
// inside it, as PostgreSQL requires.
func rollbackPrepared(ctx context.Context, nodeURL, name string) error {
	conn, err := pgx.Connect(ctx, nodeURL)
	if err != nil {
		return err
	}
	var gids []string
	rows, err := conn.Query(ctx, "select gid from pg_prepared_xacts where database = $1", name)
	if err == nil {
		gids, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	conn.Close(ctx)
	if err != nil || len(gids) == 0 {
		return err
	}
	in, err := connectTo(ctx, nodeURL, name)
	if err != nil {
		return err
	}
	defer in.Close(ctx)
	for _, gid := range gids {
		if _, err := in.Exec(ctx, "ROLLBACK PREPARED "+quoteLiteral(gid)); err != nil &&
			!strings.Contains(err.Error(), "does not exist") {
			return err
		}
	}
	return nil
}

// Describe returns the URLs of database name for each role.
func Describe(adminURL, name string) (Database, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return Database{}, err
	}
	as := func(role string) string {
		c := *u
		c.User = url.UserPassword(role, rolePassword(adminURL, role))
		c.Path = "/" + name
		return c.String()
	}
	admin := *u
	admin.Path = "/" + name
	return Database{Name: name, OwnerURL: as(OwnerRole), AppURL: as(AppRole), AdminURL: admin.String()}, nil
}

func rolePassword(adminURL, role string) string {
	mac := hmac.New(sha256.New, []byte(adminURL))
	mac.Write([]byte("pmapi role password:" + role))
	return hex.EncodeToString(mac.Sum(nil))
}

func quoteLiteral(s string) string {
	return "'" + regexp.MustCompile(`'`).ReplaceAllString(s, "''") + "'"
}

func isDuplicate(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "42710" || pgErr.Code == "23505")
}
