package authz

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/tenant"
)

// The directory of people (user_emails, migration 0018): which workspaces
// invited an email address. Users live in tenant tables, one workspace at a
// time and possibly on different shards; sign-in starts from a verified email
// and needs every workspace that invited it before any workspace is known.

// InviteUser records email in the directory of people, then creates the user
// in workspace ws on its shard. The entry comes first: a failure between the
// two leaves an entry without a user, which sign-in skips (it reads the user
// on the shard), never a user that cannot sign in.
func InviteUser(
	ctx context.Context,
	dir *tenant.Directory,
	shard *tenant.Shard,
	ws uuid.UUID,
	email, name string,
) (User, error) {
	if err := ValidateUser(email, name); err != nil {
		return User{}, err
	}
	_, err := dir.Pool().
		Exec(ctx, `insert into user_emails (email, workspace_id) values ($1, $2) on conflict do nothing`,
			strings.ToLower(email), ws)
	if err != nil {
		return User{}, tenant.DBError(err)
	}
	return CreateUser(ctx, shard, ws, email, name)
}

// WorkspacesOfEmail lists the workspaces that invited email (any case), in
// the order they were created.
func WorkspacesOfEmail(ctx context.Context, dir *tenant.Directory, email string) ([]uuid.UUID, error) {
	rows, err := dir.Pool().Query(ctx, `select workspace_id from user_emails where email = $1 order by workspace_id`,
		strings.ToLower(email))
	if err != nil {
		return nil, tenant.DBError(err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}
