package api

import (
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// Incremental sync (DESIGN.md section 12; docs/decisions/reads.md,
// "Incremental sync"): a resource's list embeds SyncQuery beside ListQuery,
// and a client mirrors the workspace by walking sort=updatedAt from the
// updatedAt it last saw.

// SyncQuery documents the two parameters of a list a client can mirror.
type SyncQuery struct {
	UpdatedSince *time.Time `query:"updatedSince" doc:"Only rows whose updatedAt is at or after this instant (RFC 3339, or a date meaning its midnight UTC)"`
	Sort         string     `query:"sort" enum:"updatedAt" enumName:"SyncSort" doc:"updatedAt: oldest change first, ties by id, for mirroring (docs/sdk.md, Incremental sync); a row changed during the walk comes again later; a page holds only changes no transaction still under way can precede; omitted: the list's default order"`
}

// SortUpdatedAt is the sort value of a mirror's walk.
const SortUpdatedAt = "updatedAt"

// SyncParams is the query's sync parameters, for DecodeSync.
func (q SyncQuery) SyncParams() SyncQuery { return q }

// syncPager is a list's query that embeds ListQuery and SyncQuery.
type syncPager interface {
	pager
	SyncParams() SyncQuery
}

// Keyset is where a page of a list starts and in which order it goes: the
// default newest first below Before, or (ByUpdate) updatedAt ascending past
// After. UpdatedSince filters either.
type Keyset struct {
	Before       *uuid.UUID
	UpdatedSince *time.Time
	ByUpdate     bool
	After        *UpdateKey
}

// UpdateKey is a row's place in a walk by updatedAt: its time and id.
type UpdateKey struct {
	At time.Time
	ID uuid.UUID
}

// SortedList is the name a list's cursors carry in the order k walks: a
// cursor of one order is refused by the other rather than giving a wrong page.
func SortedList(list string, k Keyset) string {
	if k.ByUpdate {
		return list + ":" + SortUpdatedAt
	}
	return list
}

// DecodeSync reads the query of a list that can be mirrored into a Q
// (DecodeQuery) and the keyset its sort and cursor name.
func DecodeSync[Q syncPager](c *fiber.Ctx, list string) (q Q, k Keyset, err error) {
	if q, err = DecodeQuery[Q](c); err != nil {
		return q, k, err
	}
	s := q.SyncParams()
	k = Keyset{UpdatedSince: s.UpdatedSince, ByUpdate: s.Sort == SortUpdatedAt}
	raw, err := decodeCursor(SortedList(list, k), q.paging().Cursor)
	if err != nil || raw == "" {
		return q, k, err
	}
	if !k.ByUpdate {
		id, err := cursorID(raw)
		k.Before = &id
		return q, k, err
	}
	at, err := parseUpdateKey(raw)
	k.After = &at
	return q, k, err
}

// UpdateCursorKey is the key of a walk's cursor after the row at us
// (microseconds since the Unix epoch, PostgreSQL's precision) with id.
func UpdateCursorKey(us int64, id uuid.UUID) string {
	return strconv.FormatInt(us, 10) + "/" + id.String()
}

func parseUpdateKey(raw string) (UpdateKey, error) {
	bad := pmapi.Invalid("cursor", "cursor is not one this list issued")
	us, id, ok := strings.Cut(raw, "/")
	if !ok {
		return UpdateKey{}, bad
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return UpdateKey{}, bad
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return UpdateKey{}, bad
	}
	return UpdateKey{At: time.UnixMicro(n).UTC(), ID: u}, nil
}

// PageSorted is Page for a list read in k's order: the cursor after the
// last row is its id, or its updatedAt and id in a walk by updatedAt.
func PageSorted[T any](list string, k Keyset, rows []T, limit int, id func(T) uuid.UUID,
	updated func(T) time.Time) ([]T, *string) {
	if !k.ByUpdate {
		return Page(list, rows, limit, id)
	}
	return cut(SortedList(list, k), rows, limit, func(r T) string {
		return UpdateCursorKey(updated(r).UnixMicro(), id(r))
	})
}
