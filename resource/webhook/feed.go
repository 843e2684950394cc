package webhook

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// FeedQuery is one read of a workspace's event log (docs/decisions/event-feed.md).
type FeedQuery struct {
	// After is the number of the last event the reader has; 0 reads from the
	// oldest retained event.
	After int64
	// Given is whether the reader named a position (a cursor): only then can
	// events it never saw have been dropped before it came back.
	Given bool
	// Types are the event types listed: those the caller asked for that its
	// credential may read.
	Types []string
	// Project, when set, keeps the events of that project only (its prj_ id).
	Project string
	Limit   int
}

// FeedEvent is one event of the log.
type FeedEvent struct {
	Seq        int64
	ID         uuid.UUID
	Type       string
	OccurredAt time.Time
	Data       json.RawMessage
}

// FeedPage is what one read found: its events and the position after them.
type FeedPage struct {
	Events  []FeedEvent
	Next    int64
	HasMore bool
}

// Feed reads the workspace's events after q.After, in one round trip. Three
// statements, in this order: the workspace's last committed number (head),
// the first retained number after the cursor, and the page. Every event up
// to head had committed before head was read (numbers follow commit order),
// so the page's statement, whose snapshot is later, sees all of them: when
// the page is the last, the reader's next position is head even where the
// filters skipped events after the page's last item, and no event up to it is
// ever missed. A gap between the cursor and the first retained number means
// events the reader never saw were dropped by retention: CURSOR_EXPIRED.
func (st Store) Feed(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, q FeedQuery) (FeedPage, error) {
	var head int64
	var first *int64
	var page FeedPage
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue("select n from workspace_event_seq where workspace_id = $1", ws).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				if err := rows.Scan(&head); err != nil {
					return err
				}
			}
			return rows.Err()
		})
		b.Queue("select seq from event_log where workspace_id = $1 and seq > $2 order by seq limit 1",
			ws, q.After).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var n int64
				if err := rows.Scan(&n); err != nil {
					return err
				}
				first = &n
			}
			return rows.Err()
		})
		var project any // null: every project
		if q.Project != "" {
			project = q.Project
		}
		b.Queue(feedSQL, ws, q.After, q.Types, project, q.Limit+1).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var e FeedEvent
				if err := rows.Scan(&e.Seq, &e.ID, &e.Type, &e.OccurredAt, &e.Data); err != nil {
					return err
				}
				page.Events = append(page.Events, e)
			}
			return rows.Err()
		})
	})
	if err != nil {
		return FeedPage{}, err
	}
	if q.After > head {
		return FeedPage{}, pmapi.Invalid("after", "after is not a position of this feed")
	}
	if q.Given && ((first != nil && *first > q.After+1) || (first == nil && head > q.After)) {
		return FeedPage{}, pmapi.Errorf(pmapi.CodeCursorExpired,
			"events after this cursor are past the retention; start again without after")
	}
	if len(page.Events) > q.Limit {
		page.Events, page.HasMore = page.Events[:q.Limit], true
	}
	page.Next = q.After
	if n := len(page.Events); n > 0 {
		page.Next = page.Events[n-1].Seq
	}
	if !page.HasMore {
		page.Next = max(page.Next, head)
	}
	return page, nil
}

// feedSQL is a page of the log: events after $2 of the types $3, of project
// $4 when given (a project's own events carry it as id, the others as
// projectId), in commit order.
const feedSQL = `select seq, id, type, occurred_at, data from event_log
	where workspace_id = $1 and seq > $2 and type = any($3)
	and ($4::text is null or data->>'projectId' = $4 or (type like 'project.%' and data->>'id' = $4))
	order by seq limit $5`

// A cursor is the workspace's id and a position in its log, so a cursor of
// another workspace is refused rather than read as a position of this one.
const cursorVersion = 1

// FeedCursor is the opaque text of position n in workspace ws's feed.
func FeedCursor(ws uuid.UUID, n int64) string {
	var b [25]byte
	b[0] = cursorVersion
	copy(b[1:17], ws[:])
	binary.BigEndian.PutUint64(b[17:], uint64(n))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ParseFeedCursor reads a cursor FeedCursor made for workspace ws.
func ParseFeedCursor(ws uuid.UUID, s string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 25 || b[0] != cursorVersion || [16]byte(b[1:17]) != ws ||
		binary.BigEndian.Uint64(b[17:]) > 1<<62 {
		return 0, pmapi.Invalid("after", "after is not a cursor of this workspace's event feed")
	}
	return int64(binary.BigEndian.Uint64(b[17:])), nil
}
