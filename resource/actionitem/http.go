package actionitem

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/resource/internal/route"
	"github.com/pmapi/pmapi/resource/project"
)

// routes are the action items' operations.
var routes = route.For("action-item", "action-items", "Action items")

// Resource registers action items with the server.
func Resource(s Store) api.Resource {
	return routes.Resource(api.Resource{
		Tables: []string{"action_items", "execution_logs"}, Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade: &facet.Cascade{Table: "action_items", Event: "action-item.deleted",
			IDPrefix: IDPrefix, IDField: "actionItemId", Remove: s.RemoveInProject},
		TagDoc: "Action items: tracked follow-ups (OPEN, IN_PROGRESS, DONE, CANCELLED) " +
			"with an append-only execution log; " +
			"made by hand, by an RRCA's corrective actions or by an applied look-across suggestion.",
	}, handlers{s}.operations)
}

// ListQuery documents and decodes the action-item list's parameters.
type ListQuery struct {
	api.ListQuery
	Status          string     `query:"status" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED"`
	ProjectID       *uuid.UUID `query:"projectId" id:"project"`
	OwnerHint       string     `query:"ownerHint" doc:"Case-insensitive substring of the owner hint"`
	Q               string     `query:"q" doc:"Case-insensitive substring of the title or description"`
	DueAfter        *time.Time `query:"dueAfter" format:"date-time" doc:"dueDate at or after"`
	DueBefore       *time.Time `query:"dueBefore" format:"date-time" doc:"dueDate before"`
	CreatedAfter    *time.Time `query:"createdAfter" format:"date-time"`
	CreatedBefore   *time.Time `query:"createdBefore" format:"date-time"`
	UpdatedSince    *time.Time `query:"updatedSince" doc:"Only items whose updatedAt is at or after this instant (RFC 3339, or a date meaning its midnight UTC)"`
	Sort            string     `query:"sort" enum:"createdAt,updatedAt,dueDate,title" doc:"Default createdAt; items without a due date sort after every date; updatedAt ascending is a mirror's walk (docs/sdk.md, Incremental sync): a row changed during the walk comes again later, and a page holds only changes no transaction still under way can precede"`
	SortDir         string     `query:"sortDir" enum:"asc,desc" doc:"Default desc (newest first), asc for sort=updatedAt"`
	IncludeArchived bool       `query:"includeArchived"`
}

// LogsQuery documents the log list's parameters.
type LogsQuery struct {
	api.ListQuery
	Kind string `query:"kind" enum:"NOTE,PROGRESS,BLOCKER,EVIDENCE,STATUS_CHANGE"`
}

// BatchRequest is the body of the action-item batch.
type BatchRequest struct {
	Atomic     bool      `json:"atomic,omitempty" doc:"All or nothing: the first failure rolls every operation back"`
	Operations []BatchOp `json:"operations" doc:"1 to 100 operations, run in order"`
}

// SchemaName keeps the document's name of the type it was in package api.
func (BatchRequest) SchemaName() string { return "ActionItemBatchRequest" }

// BatchOp is one operation of a batch: `op` and that operation's fields.
type BatchOp struct {
	Op           string     `json:"op" enum:"create,update,attach-project,archive,restore,delete"`
	ActionItemID string     `json:"actionItemId,omitempty" doc:"Every op but create"`
	Title        *string    `json:"title,omitempty" nullable:"false"`
	Description  *string    `json:"description,omitempty"`
	Status       *string    `json:"status,omitempty" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED" nullable:"false"`
	OwnerHint    *string    `json:"ownerHint,omitempty"`
	ProjectID    *string    `json:"projectId,omitempty"`
	DueDate      *time.Time `json:"dueDate,omitempty"`
}

// SchemaName keeps the document's name of the type it was in package api.
func (BatchOp) SchemaName() string { return "ActionItemBatchOp" }

type handlers struct{ items Store }

func (h handlers) operations(api.Catalog) []api.Operation {
	batch := api.Batch[Op, Outcome]{Kinds: OpKinds, Parse: h.parseOp, Do: h.items.Do, DoAtomic: h.items.DoAtomic,
		View: outcomeView}
	return []api.Operation{
		{Method: http.MethodGet, Path: "list", ID: "listActionItems",
			Summary: "Action items, sorted and filtered",
			Query:   ListQuery{}, Result: List{}, Handler: h.list},
		{Method: http.MethodGet, Path: "detail", ID: "getActionItem",
			Summary: "One action item",
			Query:   api.IDQuery{}, Result: View{}, Handler: route.Get(route.InQuery(ParseID), h.items.Get, ToView)},
		{Method: http.MethodPost, Path: "create", ID: "createActionItem", Idempotent: true,
			Summary: "Create an action item (source MANUAL)",
			Body:    CreateRequest{}, Result: View{}, Handler: route.Do(createOp, h.items.Do, outcomeView)},
		{Method: http.MethodPost, Path: "attach-project", ID: "attachActionItemProject", IfMatch: true,
			Summary: "Attach an action item to a project",
			Body:    AttachRequest{}, Result: View{}, Handler: route.Do(attachOp, h.items.Do, outcomeView)},
		{Method: http.MethodPost, Path: "update", ID: "updateActionItem", IfMatch: true,
			Fails:   []pmapi.Code{pmapi.CodeInvalidTransition},
			Summary: "Edit an action item; status moves follow the table and are logged",
			Body:    UpdateRequest{}, Result: View{}, Handler: route.Do(updateOp, h.items.Do, outcomeView)},
		{Method: http.MethodPost, Path: "archive", ID: "archiveActionItem", IfMatch: true,
			Summary: "Archive an action item",
			Body:    IDRequest{}, Result: View{}, Handler: route.Do(namedOp(OpArchive), h.items.Do, outcomeView)},
		{Method: http.MethodPost, Path: "restore", ID: "restoreActionItem", IfMatch: true,
			Summary: "Restore an archived action item",
			Body:    IDRequest{}, Result: View{}, Handler: route.Do(namedOp(OpRestore), h.items.Do, outcomeView)},
		{Method: http.MethodPost, Path: "delete", ID: "deleteActionItem",
			Summary: "Delete an action item and its log for good",
			Body:    IDRequest{}, Result: Deleted{}, Handler: route.Do(namedOp(OpDelete), h.items.Do, outcomeView)},
		{Method: http.MethodPost, Path: "batch", ID: "batchActionItems",
			Fails: []pmapi.Code{pmapi.CodeInvalidTransition}, Idempotent: true,
			Summary: "Up to 100 action-item operations; atomic=true makes it all or nothing",
			Body:    BatchRequest{}, Result: api.BatchResult{}, Handler: batch.Handler},
		{Method: http.MethodPost, Path: "{actionItemId}/log", ID: "addActionItemLog", Idempotent: true,
			Summary: "Append an execution log entry",
			Body:    LogRequest{}, Result: LogView{}, Handler: h.addLog},
		{Method: http.MethodGet, Path: "{actionItemId}/logs", ID: "listActionItemLogs",
			Summary: "The execution log, oldest first",
			Query:   LogsQuery{}, Result: LogList{}, Handler: h.listLogs},
	}
}

func (h handlers) list(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[ListQuery](c)
	if err != nil {
		return err
	}
	f := Filter{Status: q.Status, ProjectID: q.ProjectID, OwnerHint: q.OwnerHint, Q: q.Q,
		DueAfter: q.DueAfter, DueBefore: q.DueBefore, CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore,
		IncludeArchived: q.IncludeArchived, UpdatedSince: q.UpdatedSince, Sort: q.Sort, Limit: q.Limit + 1,
		Desc: q.SortDir == "desc" || (q.SortDir == "" && q.Sort != api.SortUpdatedAt)}
	// The cursor carries the sort it was made for, so a cursor from another
	// ordering is refused rather than giving a wrong page.
	list := "action-items:" + q.Sort + ":" + q.SortDir
	if raw, err := api.DecodeCursor(list, q.Cursor); err != nil {
		return err
	} else if raw != "" {
		var pos Position
		if json.Unmarshal([]byte(raw), &pos) != nil {
			return pmapi.Invalid("cursor", "cursor is not one this list issued")
		}
		f.After = &pos
	}
	shard, ws := api.Tenant(c)
	items, positions, err := h.items.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	var page List
	if len(items) > q.Limit {
		items = items[:q.Limit]
		raw, _ := json.Marshal(positions[q.Limit-1])
		next := api.EncodeCursor(list, string(raw))
		page.NextCursor = &next
	}
	page.Items = api.Views(items, ToView)
	return api.OK(c, page)
}

// The single routes below are the batch's operations, each run on its own
// (route.Do), by the caller: the author a status move's log entry names.

func createOp(c *fiber.Ctx, req CreateRequest, _ route.Has) (Op, error) {
	in, err := ParseCreate(req)
	return by(c, Op{Kind: OpCreate, New: in}), err
}

func attachOp(c *fiber.Ctx, req AttachRequest, _ route.Has) (Op, error) {
	id, err := ParseID(req.ActionItemID)
	if err != nil {
		return Op{}, err
	}
	pid, err := project.ParseID(req.ProjectID)
	return by(c, Op{Kind: OpAttachProject, ID: id, Project: pid}), err
}

func updateOp(c *fiber.Ctx, req UpdateRequest, has route.Has) (Op, error) {
	id, err := ParseID(req.ActionItemID)
	if err != nil {
		return Op{}, err
	}
	fields, err := ParseFields(req, has)
	return by(c, Op{Kind: OpUpdate, ID: id, Fields: fields}), err
}

// namedOp makes the operations whose body only names the item: archive,
// restore and delete.
func namedOp(kind string) func(c *fiber.Ctx, req IDRequest, _ route.Has) (Op, error) {
	return func(c *fiber.Ctx, req IDRequest, _ route.Has) (Op, error) {
		id, err := ParseID(req.ActionItemID)
		return by(c, Op{Kind: kind, ID: id, RawID: req.ActionItemID}), err
	}
}

// by names the caller as op's author.
func by(c *fiber.Ctx, op Op) Op {
	op.Author = api.Principal(c).ClientID
	return op
}

func outcomeView(o Outcome) any {
	if o.Deleted {
		return Deleted{ID: o.RawID, Deleted: true}
	}
	return ToView(o.Item)
}

func (h handlers) parseOp(c *fiber.Ctx, kind string, decode func(any) error, has func(string) bool) (Op, error) {
	var req BatchOp
	if err := decode(&req); err != nil {
		return Op{Kind: kind}, err
	}
	return ParseOp(kind, req, has, api.Principal(c).ClientID)
}

// addLog appends an entry to the log of the item the path names, by the
// caller.
func (h handlers) addLog(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("actionItemId"))
	if err != nil {
		return err
	}
	req, err := api.DecodeBody[LogRequest](c)
	if err != nil {
		return err
	}
	msg, err := ValidLog(req.Kind, req.Message)
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	l, err := h.items.AddLog(c.UserContext(), shard, ws, id, req.Kind, msg, api.Principal(c).ClientID)
	if err != nil {
		return err
	}
	return api.Created(c, ToLogView(l))
}

func (h handlers) listLogs(c *fiber.Ctx) error {
	id, err := ParseID(c.Params("actionItemId"))
	if err != nil {
		return err
	}
	q, after, err := api.DecodeList[LogsQuery](c, "logs")
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	logs, err := h.items.ListLogs(c.UserContext(), shard, ws, id, q.Kind, after, q.Limit+1)
	if err != nil {
		return err
	}
	logs, next := api.Page("logs", logs, q.Limit, func(l Log) uuid.UUID { return l.ID })
	return api.OK(c, LogList{Items: api.Views(logs, ToLogView), NextCursor: next})
}
