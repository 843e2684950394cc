package storekit

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/tenant"
)

// ListJSON reads a list page in one round trip (shard.Read, with the plan
// the lists keep: genericPlans; a walk by updatedAt reads its horizon
// first) and writes each row's JSON with row straight from its wire values
// into rows. limit is the statement's LIMIT.
func ListJSON(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	limit int,
	row *RowJSON,
	rows *jsonw.Rows,
	sql string,
	args ...any,
) error {
	from := *rows
	var sets []tenant.LocalSetting
	if shard.Mode() != tenant.SetLocal {
		sets = genericPlans
	}
	byUpdate, err := fillHorizon(ctx, shard, ws, args)
	if err != nil {
		return err
	}
	at := -1
	if byUpdate {
		at = row.index("updated_at")
	}
	return shard.ReadWith(ctx, ws, sets, func(b *pgx.Batch) {
		b.Queue(sql, args...).Query(func(r pgx.Rows) error {
			// A read sent again (shard.Read after a placement move) starts
			// the page again.
			*rows = from
			return eachJSON(r, row, limit, func(key uuid.UUID, values [][]byte) (err error) {
				if at < 0 {
					rows.Start(key)
				} else {
					us, err := timestamptz(values[at])
					if err != nil {
						return err
					}
					rows.StartAt(key, us)
				}
				rows.B, err = row.Append(rows.B, values, &rows.Dates)
				return err
			})
		})
	})
}

// GetJSON reads one row in one round trip and appends its JSON, written by
// row from its wire values, to b; no row is noun's not-found.
func GetJSON(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	row *RowJSON,
	b []byte,
	noun, sql string,
	args ...any,
) ([]byte, error) {
	out, found := b, false
	var dates jsonw.Dates
	err := shard.Read(ctx, ws, func(batch *pgx.Batch) {
		batch.Queue(sql, args...).Query(func(r pgx.Rows) error {
			out, found = b, false
			return eachJSON(r, row, 1, func(_ uuid.UUID, values [][]byte) (err error) {
				out, err = row.Append(out, values, &dates)
				found = true
				return err
			})
		})
	})
	if err == nil && !found {
		return b, pmapi.NotFound(noun)
	}
	return out, err
}

// eachJSON hands at most limit rows' key and wire values to write, after
// checking on the first that the result's columns are row's. A failed
// statement reports its own error (rows.Err), not a mismatch of columns it
// never described.
func eachJSON(rows pgx.Rows, row *RowJSON, limit int, write func(key uuid.UUID, values [][]byte) error) error {
	for n := 0; n < limit && rows.Next(); n++ {
		if n == 0 {
			if err := row.Check(rows.FieldDescriptions()); err != nil {
				return err
			}
		}
		values := rows.RawValues()
		key, err := row.Key(values)
		if err != nil {
			return err
		}
		if err := write(key, values); err != nil {
			return err
		}
	}
	return rows.Err()
}
