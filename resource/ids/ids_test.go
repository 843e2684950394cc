package ids

import (
	"testing"

	"github.com/google/uuid"
)

func TestFormatUserKeepsThePlainUUID(t *testing.T) {
	t.Parallel()
	if FormatUser(nil) != nil {
		t.Error("no user must stay null")
	}
	id := uuid.MustParse("0f8d3a52-5c1e-4c7a-9a55-2b1f6f3e7d10")
	if got := FormatUser(&id); got == nil || *got != "0f8d3a52-5c1e-4c7a-9a55-2b1f6f3e7d10" {
		t.Errorf("FormatUser = %v; want the UUID as written", got)
	}
}
