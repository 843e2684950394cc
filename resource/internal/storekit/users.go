package storekit

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
)

// UserField is a request field holding user ids.
type UserField struct {
	Name string
	IDs  []uuid.UUID
	list bool
}

// User is a field holding at most one user id.
func User(name string, id *uuid.UUID) UserField {
	if id == nil {
		return UserField{Name: name}
	}
	return UserField{Name: name, IDs: []uuid.UUID{*id}}
}

// Users is a field holding a list of user ids.
func Users(name string, ids ...uuid.UUID) UserField {
	return UserField{Name: name, IDs: ids, list: true}
}

// CheckUsers refuses, in one query, user ids that are not users of the
// workspace: 400 naming the first field that holds a stranger.
func CheckUsers(ctx context.Context, tx pgx.Tx, ws uuid.UUID, fields ...UserField) error {
	var ids []uuid.UUID
	for _, f := range fields {
		ids = append(ids, f.IDs...)
	}
	if len(ids) == 0 {
		return nil
	}
	known, err := authz.KnownUsers(ctx, tx, ws, ids)
	if err != nil {
		return err
	}
	for _, f := range fields {
		for _, id := range f.IDs {
			if known[id] {
				continue
			}
			if f.list {
				return pmapi.Invalid(f.Name, "%s must name users of this workspace", f.Name)
			}
			return pmapi.Invalid(f.Name, "%s must name a user of this workspace", f.Name)
		}
	}
	return nil
}
