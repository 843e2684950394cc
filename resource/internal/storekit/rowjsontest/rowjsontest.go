// Package rowjsontest checks a storekit.RowJSON against encoding/json's
// encoding of its view.
package rowjsontest

import (
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"

	"github.com/pmapi/pmapi/internal/jsonw"
	"github.com/pmapi/pmapi/resource/internal/storekit"
)

// SameJSON fails tb unless, for every row, w writes from the row's wire
// values (values gives them in w's column order, encoded here as pgx's
// binary format, nil for NULL) exactly what encoding/json writes for
// view(row): a member missing, misnamed or out of order, or a value written
// otherwise, shows here. Times the view writes in their own zone must be in
// time.Local, the zone pgx scans them into.
func Same[T, V any](tb testing.TB, w *storekit.RowJSON, rows []T, values func(T) []any, view func(T) V) {
	tb.Helper()
	m := pgtype.NewMap()
	pgxuuid.Register(m)
	fields := w.Fields()
	if err := w.Check(fields); err != nil {
		tb.Fatal(err)
	}
	var dates jsonw.Dates // the rows' times through one, as a page's are
	for i, row := range rows {
		vals := values(row)
		if len(vals) != len(fields) {
			tb.Fatalf("row %d: %d values for %d columns", i, len(vals), len(fields))
		}
		wire := make([][]byte, len(vals))
		for j, v := range vals {
			// A buffer to begin with, so that an empty value is not nil: NULL.
			b, err := m.Encode(fields[j].DataTypeOID, pgtype.BinaryFormatCode, v, make([]byte, 0, 16))
			if err != nil {
				tb.Fatalf("row %d, %s: %v", i, fields[j].Name, err)
			}
			wire[j] = b
		}
		got, err := w.Append(nil, wire, &dates)
		if err != nil {
			tb.Fatalf("row %d: %v", i, err)
		}
		want, err := json.Marshal(view(row))
		if err != nil {
			tb.Fatal(err)
		}
		if string(got) != string(want) {
			tb.Errorf("row %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
