package webhook_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// body is a delivered webhook body as a receiver reads it.
type body struct {
	ID         string         `json:"id"`
	EventID    string         `json:"eventId"`
	Type       string         `json:"type"`
	OccurredAt time.Time      `json:"occurredAt"`
	Data       map[string]any `json:"data"`
}

func bodies(t *testing.T, rcv *apitest.Receiver) []body {
	t.Helper()
	var out []body
	for _, r := range rcv.Requests() {
		var b body
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestATransactionsEventsArriveInOrder: the events of one transaction reach a
// subscription in the order docs/decisions/webhooks.md gives (a risk's status move:
// status_changed, resolved, updated; a project delete: every child's deleted
// event, then project.deleted), and sorting by (occurredAt, eventId), as
// docs/webhooks.md tells receivers to, gives the same order.
func TestATransactionsEventsArriveInOrder(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	_, tn := apitest.WebhookEnv(t, rcv, true)
	prj := tn.CreateProject(t, map[string]any{"name": "ordered"})["id"].(string)
	tn.CreateTask(t, map[string]any{"projectId": prj, "title": "one"})
	tn.CreateTask(t, map[string]any{"projectId": prj, "title": "two"})
	risk := tn.CreateRisk(t, map[string]any{"projectId": prj, "title": "r"})["id"].(string)
	// Not "*": the fan-outs of the set-up may still be running.
	tn.Subscribe(t, rcv.URL, "risk.status_changed", "risk.resolved", "risk.updated", "task.deleted", "risk.deleted",
		"project.deleted")

	check := func(what string, want []string, do func()) {
		t.Helper()
		rcv.SetStatuses(200)
		do()
		apitest.Eventually(t, apitest.JobWait, what, func() bool { return len(rcv.Requests()) >= len(want) })
		time.Sleep(200 * time.Millisecond)
		got := bodies(t, rcv)
		var types []string
		for _, b := range got {
			types = append(types, b.Type)
		}
		if !slices.Equal(types, want) {
			t.Errorf("%s: delivered %v, want %v", what, types, want)
		}
		sorted := slices.Clone(got)
		sort.SliceStable(sorted, func(i, j int) bool {
			if !sorted[i].OccurredAt.Equal(sorted[j].OccurredAt) {
				return sorted[i].OccurredAt.Before(sorted[j].OccurredAt)
			}
			return sorted[i].EventID < sorted[j].EventID
		})
		for i := range got {
			if sorted[i].EventID != got[i].EventID {
				t.Errorf("%s: sorted by (occurredAt, eventId) the events read %v", what, sorted)
				break
			}
		}
	}
	check("a risk resolved", []string{"risk.status_changed", "risk.resolved", "risk.updated"}, func() {
		if r := tn.Do(t, "POST", apitest.RiskBase+"update",
			map[string]any{"riskId": risk, "status": "RESOLVED"}); r.Status != 201 {
			t.Fatalf("resolve: %s", r.Raw)
		}
	})
	if r := tn.Do(t, "POST", apitest.ProjectBase+"archive", map[string]any{"id": prj}); r.Status != 201 {
		t.Fatalf("archive: %s", r.Raw)
	}
	check("a project deleted", []string{"task.deleted", "task.deleted", "risk.deleted", "project.deleted"}, func() {
		if r := tn.Do(t, "POST", apitest.ProjectBase+"delete", map[string]any{"id": prj}); r.Status != 201 {
			t.Fatalf("delete: %s", r.Raw)
		}
	})
}

// TestReceiversCanDeduplicateOnEventID: one event reaches two subscriptions
// with two delivery ids and one eventId; a replay is a new delivery of the
// same eventId and occurredAt; a bulk replay since a time replays an event
// once however often it is run (a replayed event is left out), unless
// includeReplayed.
func TestReceiversCanDeduplicateOnEventID(t *testing.T) {
	rcv := apitest.NewReceiver(t)
	_, tn := apitest.WebhookEnv(t, rcv, true)
	first, _ := tn.Subscribe(t, rcv.URL+"/a", "project.created")
	tn.Subscribe(t, rcv.URL+"/b", "project.created")
	tn.CreateProject(t, map[string]any{"name": "twice"})
	apitest.Eventually(t, apitest.JobWait, "two deliveries", func() bool { return len(rcv.Requests()) == 2 })
	got := bodies(t, rcv)
	if got[0].ID == got[1].ID || got[0].EventID != got[1].EventID || !strings.HasPrefix(got[0].EventID, "evn_") ||
		!got[0].OccurredAt.Equal(got[1].OccurredAt) || time.Since(got[0].OccurredAt) > time.Minute {
		t.Fatalf("one event to two subscriptions: %+v", got)
	}
	event, when := got[0].EventID, got[0].OccurredAt

	// The fan-out sends before it records the deliveries, so a receiver can
	// hold a delivery a moment before the list shows it.
	var listed []map[string]any
	apitest.Eventually(t, apitest.JobWait, "the delivery recorded", func() bool {
		listed = tn.Get(t, "/openapi/v1/webhooks/deliveries", map[string]string{"subscriptionId": first}).Items()
		return len(listed) == 1
	})
	orig := listed[0]["id"].(string)
	if listed[0]["eventId"] != event {
		t.Errorf("the listed delivery names event %v, want %s", listed[0]["eventId"], event)
	}
	rcv.SetStatuses(200)
	rep := tn.Do(t, "POST", "/openapi/v1/webhooks/deliveries/"+orig+"/replay", nil)
	if rep.Status != 201 || rep.Str("eventId") != event {
		t.Fatalf("replay: %s", rep.Raw)
	}
	apitest.Eventually(t, apitest.JobWait, "the replay", func() bool { return len(rcv.Requests()) == 1 })
	if b := bodies(t, rcv)[0]; b.ID != rep.Str("id") || b.EventID != event || !b.OccurredAt.Equal(when) {
		t.Errorf("the replay's body %+v: want its own id with event %s at %v", b, event, when)
	}

	// Bulk recovery of failed deliveries: the first failed delivery of an
	// event is replayed once, then left alone.
	if err := tn.ExecAsServer(t, "update webhook_deliveries set status = 'DEAD' where replay_of is null"); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Hour).Format(time.RFC3339)
	bulk := func(include bool) int {
		t.Helper()
		r := tn.Do(t, "POST", "/openapi/v1/webhooks/deliveries/replay",
			map[string]any{"subscriptionId": first, "since": since, "includeReplayed": include})
		if r.Status != 201 {
			t.Fatalf("bulk replay: %d %s", r.Status, r.Raw)
		}
		return int(r.Data()["count"].(float64))
	}
	if n := bulk(false); n != 0 {
		t.Errorf("bulk replay of an event already replayed since then: %d, want 0", n)
	}
	if n := bulk(true); n != 1 {
		t.Errorf("bulk replay with includeReplayed: %d, want 1", n)
	}
}
