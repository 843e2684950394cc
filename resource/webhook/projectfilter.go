package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/project"
)

// A subscription's project filter (ProjectIDs) keeps it to the events of
// some projects. The fan-out learns an event's project from the data it
// already holds, so the filter costs no statement: the payload's projectId,
// or a project event's own id. A payload that names only its record (the
// spec fixes task.status_changed to taskId, from, to) takes the project of
// that record from another event of the same fan-out that carries the whole
// record with its projectId: a change's events are fanned out together, and
// a status change always comes with the record's created or updated event.
// An event whose project stays unknown (webhook.test, an action item not
// attached to a project, an analysis's phase and node events) goes to every
// subscription that wants its type: a filter narrows what a subscriber gets,
// it never hides an event that may be theirs.

// maxFilterProjects bounds a filter: its projects are checked one by one when
// it is set.
const maxFilterProjects = 100

// parseProjectFilter reads a request's projectIds: nil for every project,
// else a sorted list without repeats.
func parseProjectFilter(ids *[]string) ([]uuid.UUID, error) {
	if ids == nil {
		return nil, nil
	}
	if len(*ids) == 0 || len(*ids) > maxFilterProjects {
		return nil, pmapi.Invalid("projectIds",
			"projectIds must name 1 to %d projects, or be null for every project", maxFilterProjects)
	}
	out := make([]uuid.UUID, 0, len(*ids))
	for i, s := range *ids {
		id, err := pmapi.ParseID(pmapi.ProjectIDPrefix, s, "project")
		if err != nil {
			return nil, pmapi.Invalid("projectIds", "projectIds[%d] %q is not a project id (prj_...)", i, s)
		}
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return slices.Compact(out), nil
}

// checkProjects refuses, in the transaction that sets a filter, a project
// that is not one of the workspace's. The projects are not held: one deleted
// later stays in the filter and matches nothing.
func checkProjects(ctx context.Context, tx pgx.Tx, ws uuid.UUID, ids []uuid.UUID) error {
	for _, id := range ids {
		err := project.Exists(ctx, tx, ws, id)
		if err != nil && pmapi.ErrorCode(err) == pmapi.CodeNotFound {
			return pmapi.Invalid("projectIds", "%s is not a project of this workspace",
				pmapi.FormatID(pmapi.ProjectIDPrefix, id))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// projectsView is a filter as the API shows it.
func projectsView(ids []uuid.UUID) *[]string {
	if ids == nil {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = pmapi.FormatID(pmapi.ProjectIDPrefix, id)
	}
	return &out
}

// eventProjects is the project of each event (nil where unknown), or nil
// when no subscription filters: only then is any payload decoded.
func eventProjects(events []Event, subs []Subscription) []*uuid.UUID {
	if !slices.ContainsFunc(subs, func(s Subscription) bool { return s.ProjectIDs != nil }) {
		return nil
	}
	type named struct {
		ID           string          `json:"id"`
		ProjectID    json.RawMessage `json:"projectId"`
		TaskID       string          `json:"taskId"`
		ActionItemID string          `json:"actionItemId"`
		RRCAID       string          `json:"rrcaId"`
	}
	out := make([]*uuid.UUID, len(events))
	records := map[string]*uuid.UUID{} // a record's id (tsk_..., act_...) to its project
	payloads := make([]named, len(events))
	for i, e := range events {
		p := &payloads[i]
		if json.Unmarshal(e.Data, p) != nil {
			continue
		}
		switch {
		case len(p.ProjectID) > 0:
			out[i] = projectOf(p.ProjectID)
			if p.ID != "" {
				records[p.ID] = out[i]
			}
		case strings.HasPrefix(e.Type, "project.") && p.ID != "":
			out[i] = projectID(p.ID)
		}
	}
	for i := range events {
		p := payloads[i]
		if out[i] != nil || len(p.ProjectID) > 0 {
			continue
		}
		for _, rec := range []string{p.TaskID, p.ActionItemID, p.RRCAID} {
			if prj, ok := records[rec]; ok && rec != "" {
				out[i] = prj
				break
			}
		}
	}
	return out
}

// projectOf reads a payload's projectId; nil for null or anything else.
func projectOf(raw json.RawMessage) *uuid.UUID {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return projectID(s)
}

// projectID parses a project id; nil when s is none.
func projectID(s string) *uuid.UUID {
	id, err := pmapi.ParseID(pmapi.ProjectIDPrefix, s, "project")
	if err != nil {
		return nil
	}
	return &id
}

// covers reports whether the subscription's filter lets through an event of
// project prj (nil: unknown or none).
func (s Subscription) covers(prj *uuid.UUID) bool {
	return s.ProjectIDs == nil || prj == nil || slices.Contains(s.ProjectIDs, *prj)
}
