package webhook

import (
	"testing"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// TestEventProjects: an event's project comes from its data's projectId, a
// project event's id, or, for data that names only its record, another event
// of the same fan-out carrying that record; otherwise it is unknown (nil),
// and no payload is read while no subscription filters.
func TestEventProjects(t *testing.T) {
	a, b := pmapi.NewID(), pmapi.NewID()
	prj := func(id uuid.UUID) string { return pmapi.FormatID(pmapi.ProjectIDPrefix, id) }
	events := []Event{
		{Type: "task.status_changed", Data: []byte(`{"taskId":"tsk_1","from":"TODO","to":"DONE"}`)},
		{Type: "task.updated", Data: []byte(`{"id":"tsk_1","projectId":"` + prj(a) + `"}`)},
		{Type: "project.updated", Data: []byte(`{"id":"` + prj(b) + `"}`)},
		{Type: "project.deleted", Data: []byte(`{"projectId":"` + prj(b) + `"}`)},
		{Type: "action-item.updated", Data: []byte(`{"id":"act_1","projectId":null}`)},
		{Type: "action-item.status_changed", Data: []byte(`{"actionItemId":"act_1"}`)},
		{Type: "rrca.advanced", Data: []byte(`{"rrcaId":"rca_9"}`)},
		{Type: "webhook.test", Data: []byte(`{"subscriptionId":"whk_1"}`)},
		{Type: "task.created", Data: []byte(`{"projectId":"tsk_notaproject"}`)},
		{Type: "note.created", Data: []byte(`not json`)},
	}
	want := []*uuid.UUID{&a, &a, &b, &b, nil, nil, nil, nil, nil, nil}
	if got := eventProjects(events, []Subscription{{}}); got != nil {
		t.Fatalf("read payloads with no filter: %v", got)
	}
	got := eventProjects(events, []Subscription{{}, {ProjectIDs: []uuid.UUID{a}}})
	for i, w := range want {
		if (got[i] == nil) != (w == nil) || w != nil && *got[i] != *w {
			t.Errorf("%s: project %v, want %v", events[i].Type, got[i], w)
		}
	}
	filtered := Subscription{ProjectIDs: []uuid.UUID{a}}
	if !filtered.covers(&a) || filtered.covers(&b) || !filtered.covers(nil) || !(Subscription{}).covers(&b) {
		t.Error("covers: a filter lets through its projects and events of none only")
	}
}
