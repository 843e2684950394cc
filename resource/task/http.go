package task

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/route"
)

// routes are the tasks' operations.
var routes = route.For("task", "tasks", "Tasks")

// Resource registers tasks with the server.
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: []string{"tasks", "task_search"}, Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade: &facet.Cascade{Table: "tasks", Event: "task.deleted",
			IDPrefix: IDPrefix, IDField: "taskId", Remove: RemoveInProject},
		TagDoc: "Tasks of a project, " +
			"moved through TODO, IN_PROGRESS, BLOCKED, REVIEW and DONE by the transition table.",
	}, handlers{s}.operations)
}

// ListQuery documents and decodes the task list's parameters; all are optional.
type ListQuery struct {
	api.ListQuery
	api.SyncQuery
	ProjectID       *uuid.UUID `query:"projectId" id:"project" doc:"Only this project's tasks (prj_...)"`
	Status          string     `query:"status" enum:"TODO,IN_PROGRESS,BLOCKED,REVIEW,DONE" doc:"Only tasks in this status; omitted: every status"`
	AssigneeID      *uuid.UUID `query:"assigneeId" format:"uuid" doc:"Only tasks assigned to this user"`
	Q               string     `query:"q" maxLength:"200" doc:"Case-insensitive substring of the title (at most 200 characters)"`
	DueAfter        *time.Time `query:"dueAfter" doc:"dueDate at or after this instant (RFC 3339, or a date meaning its midnight UTC); tasks without a due date never match a due filter"`
	DueBefore       *time.Time `query:"dueBefore" doc:"dueDate strictly before this instant"`
	CreatedAfter    *time.Time `query:"createdAfter" doc:"createdAt at or after this instant"`
	CreatedBefore   *time.Time `query:"createdBefore" doc:"createdAt strictly before this instant"`
	IncludeArchived bool       `query:"includeArchived" doc:"Include archived tasks; default false"`
}

// DetailQuery names one task.
type DetailQuery struct {
	ID string `query:"id" required:"true" doc:"Task id (tsk_...)"`
}

type handlers struct{ tasks Store }

func (h handlers) operations(api.Catalog) []api.Operation {
	batch := api.Batch[Op, Task]{Kinds: OpKinds, Parse: h.parseOp, Do: h.tasks.Do, DoAtomic: h.tasks.DoAtomic,
		View: func(t Task) any { return ToView(t) }}
	return []api.Operation{
		{Method: http.MethodGet, Path: "list", ID: "listTasks",
			Summary: "Tasks, newest first",
			Query:   ListQuery{}, Result: List{},
			Handler: route.List("tasks", api.DecodeSync[ListQuery], filter, h.tasks.List)},
		{Method: http.MethodGet, Path: "detail", ID: "getTask",
			Summary: "One task",
			Query:   DetailQuery{}, Result: View{}, Handler: route.Detail(ParseID, h.tasks.Detail)},
		{Method: http.MethodPost, Path: "create", ID: "createTask", Idempotent: true,
			Summary: "Create a task in TODO (emits task.created, and task.assigned when it has an assignee)",
			Body:    CreateRequest{}, Result: View{}, Handler: route.Do(createOp, h.tasks.Do, ToView)},
		{Method: route.PostAndPatch, Path: "update", ID: "updateTask", IfMatch: true,
			Fails: []pmapi.Code{pmapi.CodeInvalidTransition},
			Summary: "Change a task's fields or status " +
				"(emits task.status_changed, task.assigned and task.updated as they apply); " +
				"a status move outside the transition table is 400 INVALID_TRANSITION and changes nothing. " +
				"Both POST and PATCH are served.",
			Body: UpdateRequest{}, Result: View{}, Handler: route.Do(updateOp, h.tasks.Do, ToView)},
		{Method: http.MethodPost, Path: "archive", ID: "archiveTask", IfMatch: true,
			Summary: "Archive a task: it leaves lists unless includeArchived=true (emits task.archived)",
			Body:    IDRequest{}, Result: View{}, Handler: route.Do(named(OpArchive), h.tasks.Do, ToView)},
		{Method: http.MethodPost, Path: "restore", ID: "restoreTask", IfMatch: true,
			Summary: "Restore an archived task (emits task.restored)",
			Body:    IDRequest{}, Result: View{}, Handler: route.Do(named(OpRestore), h.tasks.Do, ToView)},
		{Method: http.MethodPost, Path: "batch", ID: "batchTasks",
			Fails: []pmapi.Code{pmapi.CodeInvalidTransition}, Idempotent: true,
			Summary: "Run 1 to 100 task operations, each on its own or (atomic=true) all or nothing; " +
				"an atomic batch that fails answers with the failing operation's status and code, " +
				"details.index and details.results",
			Body: BatchRequest{}, Result: BatchResponse{}, Handler: batch.Handler},
	}
}

// filter is the store's filter of a list's query, asking for one row past
// the page.
func filter(q ListQuery, k api.Keyset) (Filter, int) {
	return Filter{ProjectID: q.ProjectID, Status: q.Status, AssigneeID: q.AssigneeID, Q: q.Q,
		DueAfter: q.DueAfter, DueBefore: q.DueBefore, CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore,
		IncludeArchived: q.IncludeArchived, Page: k, Limit: q.Limit + 1}, q.Limit
}

// The single writes are the batch's operations run one at a time: each
// route decodes its body and makes the operation of it as the batch does
// (createOp, updateOp, namedOp), then runs it (route.Do).

// named makes archive or restore (kind) of a body that only names the task.
func named(kind string) func(_ *fiber.Ctx, req IDRequest, _ Has) (Op, error) {
	return func(_ *fiber.Ctx, req IDRequest, _ Has) (Op, error) { return namedOp(kind, req) }
}

// parseOp decodes and validates one batch operation exactly as its own
// endpoint would decode its body.
func (h handlers) parseOp(c *fiber.Ctx, kind string, decode func(any) error, has func(string) bool) (Op, error) {
	switch kind {
	case OpCreate:
		var req CreateRequest
		if err := decode(&req); err != nil {
			return Op{Kind: kind}, err
		}
		return createOp(c, req, has)
	case OpUpdate:
		var req UpdateRequest
		if err := decode(&req); err != nil {
			return Op{Kind: kind}, err
		}
		return updateOp(c, req, has)
	}
	var req IDRequest
	if err := decode(&req); err != nil {
		return Op{Kind: kind}, err
	}
	return namedOp(kind, req)
}

func createOp(_ *fiber.Ctx, req CreateRequest, has Has) (Op, error) {
	in, err := ParseCreate(req, has)
	return Op{Kind: OpCreate, New: in}, err
}

func updateOp(_ *fiber.Ctx, req UpdateRequest, has Has) (Op, error) {
	id, changes, err := ParseUpdate(req, has)
	return Op{Kind: OpUpdate, ID: id, Changes: changes}, err
}

// namedOp is an archive or a restore (kind) of the task req names.
func namedOp(kind string, req IDRequest) (Op, error) {
	id, err := ParseIDRequest(req)
	return Op{Kind: kind, ID: id}, err
}
