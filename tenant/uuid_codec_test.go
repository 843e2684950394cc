package tenant

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestUUIDPlansSkipText: with the codec registered, neither a uuid.UUID
// parameter nor a scan into *uuid.UUID goes through text (driver.Valuer,
// sql.Scanner), which is what cost the CPU.
func TestUUIDPlansSkipText(t *testing.T) {
	m := pgtype.NewMap()
	registerUUID(m)
	var u uuid.UUID
	if p := m.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &u); p == nil {
		t.Fatal("no scan plan for *uuid.UUID")
	} else if _, ok := p.(scanGoogleUUID); !ok {
		t.Errorf("scan into *uuid.UUID uses %T, want the binary scanGoogleUUID", p)
	}
	want := uuid.New()
	buf, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, want, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(buf) != 16 || uuid.UUID(buf) != want {
		t.Errorf("a uuid.UUID parameter encodes as %x, want its 16 bytes %x", buf, want[:])
	}
	if err := m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, buf, &u); err != nil || u != want {
		t.Errorf("scan back: %v, %v", u, err)
	}
	u = want
	if err := m.Scan(pgtype.UUIDOID, pgtype.BinaryFormatCode, nil, &u); err != nil || u != uuid.Nil {
		t.Errorf("NULL into uuid.UUID gives %v, %v; want uuid.Nil and no error", u, err)
	}
}
