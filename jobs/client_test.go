package jobs_test

import (
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/jobs"
)

// River refuses a fetch cooldown longer than the idle poll; any cooldown an
// operator sets, short or long, must still build working clients.
func TestFetchCooldownBuildsValidClients(t *testing.T) {
	dir, _ := testdb.Directory(t)
	for _, cooldown := range []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 5 * time.Second} {
		if _, err := jobs.NewClients(dir, jobs.Options{Work: true, Workers: 100, FetchCooldown: cooldown}); err != nil {
			t.Errorf("cooldown %s: %v", cooldown, err)
		}
	}
}
