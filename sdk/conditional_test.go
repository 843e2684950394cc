package pmapisdk_test

import (
	"context"
	"testing"

	pmapisdk "github.com/pmapi/pmapi/sdk"
)

// TestSDKPollsWithETag: a list asked again with its ETag is NotModified,
// with nothing to decode and no error, until the list changes.
func TestSDKPollsWithETag(t *testing.T) {
	t.Parallel()
	_, base, tn := server(t)
	ctx := context.Background()
	c, err := pmapisdk.New(base, tn.ClientID, pmapisdk.APIKey(tn.Key))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProjectWithResponse(ctx, &pmapisdk.CreateProjectParams{},
		pmapisdk.ProjectCreateRequest{Name: "Polled"})
	must(t, "create project", p, p.Body, err)

	l, err := c.ListProjectsWithResponse(ctx, &pmapisdk.ListProjectsParams{})
	must(t, "list", l, l.Body, err)
	tag := pmapisdk.ETag(l.HTTPResponse)
	if tag == "" || pmapisdk.NotModified(l) {
		t.Fatalf("first list: ETag %q, status %d", tag, l.StatusCode())
	}
	again, err := c.ListProjectsWithResponse(ctx, &pmapisdk.ListProjectsParams{IfNoneMatch: &tag})
	must(t, "list again", again, again.Body, err)
	if !pmapisdk.NotModified(again) || again.JSON200 != nil || pmapisdk.ETag(again.HTTPResponse) != tag {
		t.Errorf("unchanged list: %d, JSON200 %v, ETag %q", again.StatusCode(), again.JSON200,
			pmapisdk.ETag(again.HTTPResponse))
	}
	p, err = c.CreateProjectWithResponse(ctx, &pmapisdk.CreateProjectParams{},
		pmapisdk.ProjectCreateRequest{Name: "Another"})
	must(t, "create another", p, p.Body, err)
	changed, err := c.ListProjectsWithResponse(ctx, &pmapisdk.ListProjectsParams{IfNoneMatch: &tag})
	must(t, "list after a change", changed, changed.Body, err)
	if pmapisdk.NotModified(changed) || changed.JSON200 == nil || len(changed.JSON200.Data.Items) != 2 ||
		pmapisdk.ETag(changed.HTTPResponse) == tag {
		t.Errorf("changed list: %d %s", changed.StatusCode(), changed.Body)
	}
}

// TestSDKUpdatesIfMatch: an update sent with the ETag of a task's GET
// proceeds; sent with it again once the task has changed, it is
// PreconditionFailed and changes nothing.
func TestSDKUpdatesIfMatch(t *testing.T) {
	t.Parallel()
	_, base, tn := server(t)
	ctx := context.Background()
	c, err := pmapisdk.New(base, tn.ClientID, pmapisdk.APIKey(tn.Key))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProjectWithResponse(ctx, &pmapisdk.CreateProjectParams{},
		pmapisdk.ProjectCreateRequest{Name: "Guarded"})
	must(t, "create project", p, p.Body, err)
	task, err := c.CreateTaskWithResponse(ctx, &pmapisdk.CreateTaskParams{},
		pmapisdk.TaskCreateRequest{ProjectId: p.JSON201.Data.Id, Title: "Read first"})
	must(t, "create task", task, task.Body, err)
	id := task.JSON201.Data.Id

	g, err := c.GetTaskWithResponse(ctx, &pmapisdk.GetTaskParams{Id: id})
	must(t, "get", g, g.Body, err)
	tag := pmapisdk.ETag(g.HTTPResponse)
	title := "Changed as read"
	u, err := c.UpdateTaskWithResponse(ctx, &pmapisdk.UpdateTaskParams{IfMatch: &tag},
		pmapisdk.TaskUpdateRequest{TaskId: id, Title: &title})
	must(t, "update with the current ETag", u, u.Body, err)

	stale := "Changed blindly"
	u, err = c.UpdateTaskWithResponse(ctx, &pmapisdk.UpdateTaskParams{IfMatch: &tag},
		pmapisdk.TaskUpdateRequest{TaskId: id, Title: &stale})
	if err != nil {
		t.Fatal(err)
	}
	if err := pmapisdk.Check(u, u.Body); !pmapisdk.PreconditionFailed(err) || u.StatusCode() != 412 {
		t.Fatalf("update with a stale ETag: %d %v", u.StatusCode(), err)
	}
	g, err = c.GetTaskWithResponse(ctx, &pmapisdk.GetTaskParams{Id: id})
	must(t, "get again", g, g.Body, err)
	if g.JSON200.Data.Title != title {
		t.Errorf("a refused update changed the title to %q", g.JSON200.Data.Title)
	}
}
