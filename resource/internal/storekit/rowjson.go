package storekit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/internal/jsonw"
)

// A RowJSON writes a row's view as JSON straight from PostgreSQL's wire
// values (binary uuids, integers and timestamps, text as it is), byte for
// byte what encoding/json writes for the view (rowjsontest.Same checks
// it): no Go value is made of a column, so a row costs neither an allocation
// nor pgx's scan machinery (docs/decisions/reads.md). Its columns are the
// view's members in the view's order; each names the result column it reads,
// and a result whose columns differ in name, type or format is an error, not
// a wrong page.
type RowJSON struct {
	cols []Col
}

// A Col is one member of a RowJSON: the result column it reads, and how.
type Col struct {
	column string
	member string // `{"key":` for the first, `,"key":` for the others
	oid    uint32
	write  writer
	prefix string // an ID's
	null   bool
	slot   int // a time's: its place among the view's times (jsonw.Dates)
}

type writer uint8

const (
	writeID writer = iota
	writeUUID
	writeText
	writeInt
	writeTime
	writeTimeUTC
)

// ID is a uuid column written as a prefixed id (pmapi.AppendID).
func ID(column, key, prefix string) Col {
	return Col{column: column, member: key, oid: pgtype.UUIDOID, write: writeID, prefix: prefix}
}

// UUID is a uuid column written in its canonical text (a user id).
func UUID(column, key string) Col {
	return Col{column: column, member: key, oid: pgtype.UUIDOID, write: writeUUID}
}

// Text is a text column.
func Text(column, key string) Col {
	return Col{column: column, member: key, oid: pgtype.TextOID, write: writeText}
}

// Int is an integer column of any width (int2, int4 or int8).
func Int(column, key string) Col {
	return Col{column: column, member: key, write: writeInt}
}

// Time is a timestamptz column written as pgx scans it, in the process's
// time zone (what a view holding the scanned time.Time writes).
func Time(column, key string) Col {
	return Col{column: column, member: key, oid: pgtype.TimestamptzOID, write: writeTime}
}

// TimeUTC is a timestamptz column written in UTC.
func TimeUTC(column, key string) Col {
	return Col{column: column, member: key, oid: pgtype.TimestamptzOID, write: writeTimeUTC}
}

// OrNull lets the column be NULL, written as null. A NULL in a column
// without it is an error, as a scan into a non-pointer is.
func (c Col) OrNull() Col {
	c.null = true
	return c
}

// NewRowJSON makes the writer of a view with cols; the first is the row's
// key, a uuid (ID or UUID), which pages use for their cursor.
func NewRowJSON(cols ...Col) *RowJSON {
	if len(cols) == 0 || cols[0].oid != pgtype.UUIDOID || cols[0].null {
		panic("storekit: a RowJSON starts with its row's uuid key")
	}
	r := &RowJSON{cols: make([]Col, len(cols))}
	times := 0
	for i, c := range cols {
		if c.write == writeTime || c.write == writeTimeUTC {
			c.slot, times = times, times+1
		}
		sep := ","
		if i == 0 {
			sep = "{"
		}
		c.member = string(jsonw.String([]byte(sep), c.member)) + ":"
		r.cols[i] = c
	}
	return r
}

// Check tells whether a result's columns are the ones r reads, in r's order,
// of r's types and in a format r reads: binary for all but text, which is
// the same bytes in both. It runs once per result, not per row.
func (r *RowJSON) Check(fields []pgconn.FieldDescription) error {
	if len(fields) != len(r.cols) {
		return fmt.Errorf("storekit: the result has %d columns, the view %d", len(fields), len(r.cols))
	}
	for i, f := range fields {
		c := r.cols[i]
		typed := f.DataTypeOID == c.oid || c.write == writeInt && isInt(f.DataTypeOID)
		if f.Name != c.column || !typed || f.Format != pgtype.BinaryFormatCode && c.write != writeText {
			return fmt.Errorf(
				"storekit: column %d is %s (type %d, format %d), the view reads %s (type %d)",
				i+1,
				f.Name,
				f.DataTypeOID,
				f.Format,
				c.column,
				c.oid,
			)
		}
	}
	return nil
}

// Fields describes a result r reads, every column in binary and integers as
// int8: what a test encodes a row's values as (rowjsontest.Same).
func (r *RowJSON) Fields() []pgconn.FieldDescription {
	out := make([]pgconn.FieldDescription, len(r.cols))
	for i, c := range r.cols {
		oid := c.oid
		if c.write == writeInt {
			oid = pgtype.Int8OID
		}
		out[i] = pgconn.FieldDescription{Name: c.column, DataTypeOID: oid, Format: pgtype.BinaryFormatCode}
	}
	return out
}

func isInt(oid uint32) bool {
	return oid == pgtype.Int2OID || oid == pgtype.Int4OID || oid == pgtype.Int8OID
}

// index is where the result column named column is among the row's; a
// list walked by updatedAt has its view's updated_at column.
func (r *RowJSON) index(column string) int {
	for i := range r.cols {
		if r.cols[i].column == column {
			return i
		}
	}
	panic("storekit: the view has no column " + column)
}

// Key is the row's key, its first column.
func (r *RowJSON) Key(values [][]byte) (uuid.UUID, error) {
	if len(values) == 0 || len(values[0]) != 16 {
		return uuid.Nil, errWire
	}
	return uuid.UUID(values[0]), nil
}

var (
	errWire = errors.New("storekit: a wire value of the wrong length")
	// errNoJSONTime: time.Time has no infinity (pgx refuses to scan one too)
	// and JSON no year past 9999.
	errNoJSONTime = errors.New("storekit: a timestamp with no JSON time (infinite, or a year outside 0 to 9999)")
)

// Append appends the row's JSON object, read from one row's values of a
// result Check accepted; dates carries each time column's last date from
// one row to the next (a page's).
func (r *RowJSON) Append(b []byte, values [][]byte, dates *jsonw.Dates) ([]byte, error) {
	if len(values) != len(r.cols) {
		return b, errWire
	}
	for i := range r.cols {
		c := &r.cols[i]
		b = append(b, c.member...)
		v := values[i]
		if v == nil {
			if !c.null {
				return b, fmt.Errorf("%w: %s", errNull, c.column)
			}
			b = append(b, "null"...)
			continue
		}
		var err error
		if b, err = c.append(b, v, dates); err != nil {
			return b, fmt.Errorf("%w: %s", err, c.column)
		}
	}
	return append(b, '}'), nil
}

func (c *Col) append(b, v []byte, dates *jsonw.Dates) ([]byte, error) {
	switch c.write {
	case writeID, writeUUID:
		if len(v) != 16 {
			return b, errWire
		}
		id := uuid.UUID(v)
		if c.write == writeID {
			return pmapi.AppendID(b, c.prefix, id), nil
		}
		return jsonw.UUID(b, &id), nil
	case writeText:
		// The string lives only while it is appended; pgx keeps the bytes
		// until the next row.
		return jsonw.String(b, unsafe.String(unsafe.SliceData(v), len(v))), nil
	case writeInt:
		switch len(v) {
		case 2:
			return jsonw.Int(b, int(int16(binary.BigEndian.Uint16(v)))), nil
		case 4:
			return jsonw.Int(b, int(int32(binary.BigEndian.Uint32(v)))), nil
		case 8:
			return jsonw.Int(b, int(int64(binary.BigEndian.Uint64(v)))), nil
		}
		return b, errWire
	default:
		us, err := timestamptz(v)
		if err != nil {
			return b, err
		}
		if c.write == writeTime {
			// RFC 3339 writes any zone at offset zero as UTC does.
			if t := time.UnixMicro(us); !zeroOffset(t) {
				return jsonw.Time(b, t), nil
			}
		}
		return dates.Column(c.slot).TimeMicros(b, us), nil
	}
}

func zeroOffset(t time.Time) bool {
	_, offset := t.Zone()
	return offset == 0
}

// microsecondsAtY2K is PostgreSQL's epoch, 2000-01-01 UTC, in microseconds
// since the Unix epoch.
const microsecondsAtY2K = 946684800 * 1_000_000

// timestamptz reads a binary timestamptz (microseconds since 2000-01-01 UTC)
// into microseconds since the Unix epoch, the instant pgx would scan.
// Infinities and years outside 0 to 9999, which time.Time's MarshalJSON
// refuses, are errors.
func timestamptz(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, errWire
	}
	us := int64(binary.BigEndian.Uint64(v))
	if us < jsonw.MinMicros-microsecondsAtY2K || us > jsonw.MaxMicros-microsecondsAtY2K {
		return 0, errNoJSONTime
	}
	return us + microsecondsAtY2K, nil
}
