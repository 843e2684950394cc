package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/task"
)

// TaskListQuery documents the task list's parameters; all are optional.
type TaskListQuery struct {
	ListQuery
	ProjectID       string `query:"projectId" doc:"Only this project's tasks (prj_...)"`
	Status          string `query:"status" enum:"TODO,IN_PROGRESS,BLOCKED,REVIEW,DONE" doc:"Only tasks in this status; omitted: every status"`
	AssigneeID      string `query:"assigneeId" format:"uuid" doc:"Only tasks assigned to this user"`
	Q               string `query:"q" doc:"Case-insensitive substring of the title (at most 200 characters)"`
	DueAfter        string `query:"dueAfter" doc:"dueDate at or after this instant (RFC 3339, or a date meaning its midnight UTC); tasks without a due date never match a due filter"`
	DueBefore       string `query:"dueBefore" doc:"dueDate strictly before this instant"`
	CreatedAfter    string `query:"createdAfter" doc:"createdAt at or after this instant"`
	CreatedBefore   string `query:"createdBefore" doc:"createdAt strictly before this instant"`
	IncludeArchived bool   `query:"includeArchived" doc:"Include archived tasks; default false"`
}

// TaskDetailQuery names one task.
type TaskDetailQuery struct {
	ID string `query:"id" required:"true" doc:"Task id (tsk_...)"`
}

func (s *Server) taskOperations() []Operation {
	const tag, base = "Tasks", "/openapi/v1/resource/task/"
	read, write := "tasks:read", "tasks:write"
	update := "Change a task's fields or status (emits task.status_changed, task.assigned and task.updated as they apply); " +
		"a status move outside the transition table is 400 INVALID_TRANSITION and changes nothing. Both POST and PATCH are served."
	return []Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listTasks", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "Tasks, newest first", Query: TaskListQuery{}, Result: task.List{}, Status: http.StatusOK, Handler: s.listTasks},
		{Method: http.MethodGet, Path: base + "detail", ID: "getTask", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "One task", Query: TaskDetailQuery{}, Result: task.View{}, Status: http.StatusOK, Handler: s.getTask},
		{Method: http.MethodPost, Path: base + "create", ID: "createTask", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Create a task in TODO (emits task.created, and task.assigned when it has an assignee)", Body: task.CreateRequest{},
			Result: task.View{}, Status: http.StatusCreated, Handler: s.createTask},
		{Method: http.MethodPost, Path: base + "update", ID: "updateTask", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: update, Body: task.UpdateRequest{}, Result: task.View{}, Status: http.StatusCreated, Handler: s.updateTask},
		{Method: http.MethodPatch, Path: base + "update", ID: "patchTask", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: update, Body: task.UpdateRequest{}, Result: task.View{}, Status: http.StatusCreated, Handler: s.updateTask},
		{Method: http.MethodPost, Path: base + "archive", ID: "archiveTask", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Archive a task: it leaves lists unless includeArchived=true (emits task.archived)", Body: task.IDRequest{},
			Result: task.View{}, Status: http.StatusCreated, Handler: s.archiveTask(true)},
		{Method: http.MethodPost, Path: base + "restore", ID: "restoreTask", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Restore an archived task (emits task.restored)", Body: task.IDRequest{},
			Result: task.View{}, Status: http.StatusCreated, Handler: s.archiveTask(false)},
		{Method: http.MethodPost, Path: base + "batch", ID: "batchTasks", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Run 1 to 100 task operations, each on its own or (atomic=true) all or nothing; an atomic batch that fails " +
				"answers with the failing operation's status and code, details.index and details.results",
			Body: task.BatchRequest{}, Result: task.BatchResponse{}, Status: http.StatusCreated, Handler: s.batchTasks},
	}
}

func (s *Server) listTasks(c *fiber.Ctx) error {
	var f task.Filter
	var err error
	if f.Limit, err = queryLimit(c); err != nil {
		return err
	}
	if f.ProjectID, err = queryProject(c, "projectId"); err != nil {
		return err
	}
	if f.Status, err = queryEnum(c, "status", task.Statuses...); err != nil {
		return err
	}
	if f.AssigneeID, err = queryUser(c, "assigneeId"); err != nil {
		return err
	}
	if f.Q, err = querySearchText(c, "q"); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		into **time.Time
	}{{"dueAfter", &f.DueAfter}, {"dueBefore", &f.DueBefore}, {"createdAfter", &f.CreatedAfter}, {"createdBefore", &f.CreatedBefore}} {
		if *t.into, err = queryTime(c, t.name); err != nil {
			return err
		}
	}
	if f.IncludeArchived, err = queryBool(c, "includeArchived"); err != nil {
		return err
	}
	if f.Before, err = pageCursor(c, "tasks"); err != nil {
		return err
	}
	limit := f.Limit
	f.Limit++
	shard, ws := tenantOf(c)
	items, err := s.tasks.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := task.List{Items: []task.View{}, NextCursor: nextCursor("tasks", len(items), limit, func() uuid.UUID { return items[limit-1].ID })}
	for i, t := range items {
		if i == limit {
			break
		}
		page.Items = append(page.Items, task.ToView(t))
	}
	return respond(c, http.StatusOK, page)
}

// querySearchText reads free text for a substring filter. Text PostgreSQL
// cannot hold (NUL, invalid UTF-8) is refused here rather than failing there.
func querySearchText(c *fiber.Ctx, name string) (string, error) {
	raw := c.Query(name)
	if !utf8.ValidString(raw) || strings.ContainsRune(raw, 0) || utf8.RuneCountInString(raw) > 200 {
		return "", pmapi.Invalid(name, "%s must be valid text of at most 200 characters", name)
	}
	return raw, nil
}

func (s *Server) getTask(c *fiber.Ctx) error {
	id, err := task.ParseID(c.Query("id"))
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	t, err := s.tasks.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, task.ToView(t))
}

func (s *Server) createTask(c *fiber.Ctx) error {
	req, err := decodeBody[task.CreateRequest](c)
	if err != nil {
		return err
	}
	in, err := task.ParseCreate(req, bodyFields(c.Body()))
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	t, err := s.tasks.Create(c.UserContext(), shard, ws, in)
	if err != nil {
		return err
	}
	return created(c, task.ToView(t))
}

func (s *Server) updateTask(c *fiber.Ctx) error {
	req, err := decodeBody[task.UpdateRequest](c)
	if err != nil {
		return err
	}
	id, ch, err := task.ParseUpdate(req, bodyFields(c.Body()))
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	t, err := s.tasks.Update(c.UserContext(), shard, ws, id, ch)
	if err != nil {
		return err
	}
	return created(c, task.ToView(t))
}

func (s *Server) archiveTask(archived bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := decodeBody[task.IDRequest](c)
		if err != nil {
			return err
		}
		id, err := task.ParseIDRequest(req)
		if err != nil {
			return err
		}
		shard, ws := tenantOf(c)
		t, err := s.tasks.SetArchived(c.UserContext(), shard, ws, id, archived)
		if err != nil {
			return err
		}
		return created(c, task.ToView(t))
	}
}

// bodyFields tells which top-level fields a JSON object names, reading it once
// (bodyHas reads the body again for every question).
func bodyFields(body []byte) task.Has {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(body, &m)
	return func(field string) bool {
		_, ok := m[field]
		return ok
	}
}
