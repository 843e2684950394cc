package storekit

import (
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// Destinations for Fields that pgx fills without reflection. A **T
// destination (a nullable column into a pointer field) costs pgx a
// reflect.New and a reflective set per value, about a tenth of the CPU of a
// 50-row page; these set the pointer themselves (nil for NULL) from pgx's
// typed scanner interfaces (docs/decisions/reads.md).

// NullString is the destination of a nullable text column in *p.
func NullString(p **string) any { return nullString{p} }

// NullUUID is the destination of a nullable uuid column in *p.
func NullUUID(p **uuid.UUID) any { return nullUUID{p} }

// NullTime is the destination of a nullable timestamptz column in *p.
func NullTime(p **time.Time) any { return nullTime{p} }

// OneOf is the destination of a text column that holds one of values (a
// status): *p becomes that value's string, not a new copy per row; anything
// else is copied as it is.
func OneOf(p *string, values []string) any { return &oneOf{p, values} }

type (
	nullString struct{ p **string }
	nullUUID   struct{ p **uuid.UUID }
	nullTime   struct{ p **time.Time }
	oneOf      struct {
		p      *string
		values []string
	}
)

func (d nullString) ScanText(v pgtype.Text) error {
	*d.p = nil
	if v.Valid {
		s := v.String // a copy, so that v itself stays off the heap
		*d.p = &s
	}
	return nil
}

func (d nullUUID) ScanUUID(v pgtype.UUID) error {
	*d.p = nil
	if v.Valid {
		id := uuid.UUID(v.Bytes)
		*d.p = &id
	}
	return nil
}

var errInfinite = errors.New("an infinite timestamp has no time.Time")

func (d nullTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	*d.p = nil
	switch {
	case !v.Valid:
	case v.InfinityModifier != pgtype.Finite:
		return errInfinite
	default:
		t := v.Time
		*d.p = &t
	}
	return nil
}

var errNull = errors.New("NULL in a column that cannot hold one")

func (d *oneOf) ScanBytes(v []byte) error {
	if v == nil {
		return errNull
	}
	if i := slices.IndexFunc(d.values, func(s string) bool { return s == string(v) }); i >= 0 {
		*d.p = d.values[i]
	} else {
		*d.p = string(v)
	}
	return nil
}
