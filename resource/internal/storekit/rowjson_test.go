package storekit

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/jsonw"
)

// one is a RowJSON of every kind of column, each nullable.
var one = NewRowJSON(ID("id", "id", "x_"), UUID("u", "u").OrNull(), Text("s", "s").OrNull(), Int("n", "n").OrNull(),
	Time("t", "t").OrNull(), TimeUTC("tu", "tu").OrNull())

// FuzzRowJSON: whatever a row's wire values hold, RowJSON writes what
// encoding/json writes for the values pgx scans from them, or fails where
// pgx's scan or encoding/json fails; it never writes something else.
func FuzzRowJSON(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), "plain", int64(7), int64(0), false)
	f.Add(
		[]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"),
		"<a>&\"\\\u2028\x00caf\xc3",
		int64(-1<<63),
		int64(1<<63-1),
		true,
	)
	f.Add([]byte("short"), "", int64(-32768), int64(-63_000_000_000_000_000), false)
	f.Add([]byte("0123456789abcdef"), "é 日本", int64(1<<31), int64(253402300799_999_999-946684800_000_000), false)
	f.Fuzz(func(t *testing.T, id []byte, s string, n, us int64, null bool) {
		m := pgtype.NewMap()
		var ts [8]byte
		binary.BigEndian.PutUint64(ts[:], uint64(us))
		var nb [8]byte
		binary.BigEndian.PutUint64(nb[:], uint64(n))
		values := [][]byte{id, id, []byte(s), nb[:], ts[:], ts[:]}
		if null {
			values = [][]byte{id, nil, nil, nil, nil, nil}
		}
		got, err := one.Append(nil, values, new(jsonw.Dates))

		var tm pgtype.Timestamptz
		scanErr := m.Scan(pgtype.TimestamptzOID, pgtype.BinaryFormatCode, ts[:], &tm)
		want := map[string]any{"id": nil}
		if len(id) == 16 {
			want["id"] = pmapi.FormatID("x_", uuid.UUID(id))
			want["u"] = uuid.UUID(id).String()
		}
		if null {
			want["u"], want["s"], want["n"], want["t"], want["tu"] = nil, nil, nil, nil, nil
		} else {
			want["s"], want["n"] = s, n
			if scanErr == nil && tm.InfinityModifier == pgtype.Finite {
				want["t"], want["tu"] = tm.Time, tm.Time.UTC()
			}
		}
		// The members in the RowJSON's order, each as encoding/json writes it.
		var b strings.Builder
		var marshalErr error
		for i, k := range []string{"id", "u", "s", "n", "t", "tu"} {
			v, err := json.Marshal(want[k])
			if err != nil {
				marshalErr = err
			}
			b.WriteString(map[bool]string{true: "{", false: ","}[i == 0] + `"` + k + `":` + string(v))
		}
		b.WriteString("}")
		switch {
		case len(id) != 16:
			if err == nil {
				t.Fatalf("a %d-byte uuid was written: %s", len(id), got)
			}
		case !null && (scanErr != nil || tm.InfinityModifier != pgtype.Finite || marshalErr != nil):
			if err == nil {
				t.Fatalf("timestamp %d µs that pgx or encoding/json refuses was written: %s", us, got)
			}
		case err != nil:
			t.Fatalf("%v for values pgx and encoding/json take", err)
		case string(got) != b.String():
			t.Fatalf("\n got %s\nwant %s", got, b.String())
		}
	})
}

// TestRowJSONRefusesOtherColumns: a result whose columns are not the ones
// the RowJSON reads (another name, type or format, one more or less) is an
// error before any row is written, and so are a NULL where the view has no
// null and a wire value of the wrong length.
func TestRowJSONRefusesOtherColumns(t *testing.T) {
	good := one.Fields()
	if err := one.Check(good); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(f []pgconn.FieldDescription) []pgconn.FieldDescription{
		"name": func(f []pgconn.FieldDescription) []pgconn.FieldDescription { f[2].Name = "other"; return f },
		"type": func(f []pgconn.FieldDescription) []pgconn.FieldDescription {
			f[4].DataTypeOID = pgtype.DateOID
			return f
		},
		"int as text": func(f []pgconn.FieldDescription) []pgconn.FieldDescription {
			f[3].DataTypeOID = pgtype.TextOID
			return f
		},
		"text format": func(f []pgconn.FieldDescription) []pgconn.FieldDescription {
			f[0].Format = pgtype.TextFormatCode
			return f
		},
		"one less": func(f []pgconn.FieldDescription) []pgconn.FieldDescription { return f[:5] },
		"one more": func(f []pgconn.FieldDescription) []pgconn.FieldDescription { return append(f, f[0]) },
	} {
		if err := one.Check(change(one.Fields())); err == nil {
			t.Errorf("%s: a result of other columns passed", name)
		}
	}
	text := one.Fields()
	text[2].Format = pgtype.TextFormatCode
	if err := one.Check(text); err != nil {
		t.Errorf("text in the text format (the same bytes) refused: %v", err)
	}
	id := make([]byte, 16)
	strict := NewRowJSON(ID("id", "id", "x_"), Text("s", "s"))
	if _, err := strict.Append(nil, [][]byte{id, nil}, new(jsonw.Dates)); err == nil {
		t.Error("NULL in a column without OrNull was written")
	}
	if _, err := one.Append(nil, [][]byte{id, id[:15], nil, nil, nil, nil}, new(jsonw.Dates)); err == nil {
		t.Error("a 15-byte uuid was written")
	}
	if _, err := one.Append(nil, [][]byte{id, nil, nil, []byte{1, 2, 3}, nil, nil}, new(jsonw.Dates)); err == nil {
		t.Error("a 3-byte integer was written")
	}
}

// BenchmarkRowJSON: one task-shaped row (every column set) from its wire
// values, as a list page writes 50 of them.
func BenchmarkRowJSON(b *testing.B) {
	row := NewRowJSON(
		ID("id", "id", "tsk_"),
		ID("project_id", "projectId", "prj_"),
		Text("title", "title"),
		Text("description", "description"),
		Text(
			"status",
			"status",
		),
		Int("priority", "priority"),
		UUID("assignee_id", "assigneeId"),
		UUID("reporter_id", "reporterId"),
		TimeUTC(
			"start_date",
			"startDate",
		),
		TimeUTC("due_date", "dueDate"),
		TimeUTC("created_at", "createdAt"),
		TimeUTC("updated_at", "updatedAt"),
		TimeUTC("archived_at", "archivedAt").OrNull(),
	)
	id := uuid.Must(uuid.NewV7())
	// A task's times as a page has them: start and due on their own days,
	// created and updated on a third.
	ts := func(t time.Time) []byte {
		return binary.BigEndian.AppendUint64(nil, uint64(t.UnixMicro()-946684800_000_000))
	}
	values := [][]byte{
		id[:],
		id[:],
		[]byte("Replace the worn coupling 17"),
		[]byte("Check the alignment and the run-in"),
		[]byte("IN_PROGRESS"),
		{
			0,
			3,
		},
		id[:],
		id[:],
		ts(time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)),
		ts(time.Date(2026, 12, 1, 17, 0, 0, 500_000_000, time.UTC)),
		ts(
			time.Date(2026, 11, 25, 8, 0, 0, 123_456_000, time.UTC),
		),
		ts(time.Date(2026, 11, 25, 9, 13, 4, 987_654_000, time.UTC)),
		nil,
	}
	buf := make([]byte, 0, 1024)
	var dates jsonw.Dates // a page's: its rows' times mostly on one day
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = row.Append(buf[:0], values, &dates); err != nil {
			b.Fatal(err)
		}
	}
}
