package tenant

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
)

// registerUUID makes pgx move google/uuid values in PostgreSQL's binary form.
//
// Without it a uuid.UUID parameter reaches pgx as a driver.Valuer, which pgx
// sends through its string form, and a scan into *uuid.UUID goes through
// uuid.UUID's sql.Scanner, which pgx feeds a formatted string to parse back:
// together about a tenth of the API's CPU on a read by id. pgx-google-uuid
// covers the parameters; its scan wrapper never runs for *uuid.UUID because
// pgx prefers a target's sql.Scanner to wrappers, hence uuidCodec.
func registerUUID(m *pgtype.Map) {
	pgxuuid.Register(m)
	m.RegisterType(&pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}})
}

// uuidCodec scans into *uuid.UUID directly, before pgx falls back to its
// sql.Scanner.
type uuidCodec struct{ pgxuuid.UUIDCodec }

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok {
		if next := c.UUIDCodec.PlanScan(m, oid, format, (*pgxuuid.UUID)(nil)); next != nil {
			return scanGoogleUUID{next: next}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type scanGoogleUUID struct{ next pgtype.ScanPlan }

// Scan gives uuid.Nil for NULL instead of failing, since uuid.UUID's own Scan
// accepted NULL (it left the value alone), so nothing that scanned before
// fails now; nullable columns scan into *uuid.UUID pointers.
func (p scanGoogleUUID) Scan(src []byte, dst any) error {
	u := dst.(*uuid.UUID)
	if src == nil {
		*u = uuid.Nil
		return nil
	}
	return p.next.Scan(src, (*pgxuuid.UUID)(u))
}
