package webhook_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/resource/webhook"
)

// TestAFanoutsRecordCommitsWithoutWaitingForTheDisk: the transaction that
// records a fan-out, whether one batch (every attempt succeeded) or a
// transaction that locks the subscriptions (an attempt failed), runs with
// synchronous_commit off and the outbox's key lookups, in whichever way the
// shard binds its settings (set_config, or SET LOCAL on Citus), and its rows
// are there afterwards.
func TestAFanoutsRecordCommitsWithoutWaitingForTheDisk(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer *webhook.Result
	}{{"every attempt succeeded", &ok204}, {"an attempt failed", &failed}} {
		t.Run(tc.name, func(t *testing.T) {
			f, rec := recordedFixture(t)
			f.subscriptions(t, 1)
			ev := f.event(t, "test.ping")
			rec.start()
			if _, err := f.fanout(t, tc.answer, ev); err != nil {
				t.Fatal(err)
			}
			seen := rec.stop()
			var insert *recorded
			for sql, r := range seen {
				if strings.HasPrefix(sql, "insert into webhook_deliveries") {
					insert = &r
				}
			}
			if insert == nil {
				t.Fatalf("no delivery insert among %d statements", len(seen))
			}
			for name, want := range map[string]string{"synchronous_commit": "off", "enable_seqscan": "off"} {
				if got := settingIn(insert.settings, name); got != want {
					t.Errorf("the record's %s is %q (settings %v), want %q", name, got, insert.settings, want)
				}
			}
			if all := f.deliveries(t); len(all) != 1 || all[0].logged != 1 {
				t.Errorf("deliveries %+v after the record, want one with its attempt", all)
			}
		})
	}
}

// settingIn finds name's value among a batch's recorded settings: a SET LOCAL,
// or a set_config(name, value, true) whose name and value are parameters.
func settingIn(settings []recorded, name string) string {
	for _, s := range settings {
		if v, ok := strings.CutPrefix(s.sql, "set local "+name+" = '"); ok {
			return strings.TrimSuffix(v, "'")
		}
		for i := 0; i+1 < len(s.args); i++ {
			if fmt.Sprint(s.args[i]) == name {
				return fmt.Sprint(s.args[i+1])
			}
		}
	}
	return ""
}
