package actionitem

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/facet"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// The scopes of action items.
const (
	ScopeRead  = "action-items:read"
	ScopeWrite = "action-items:write"
)

// Resource registers action items with the server.
func Resource(s Store) api.Resource {
	return api.Resource{
		Name: "action-item", Scopes: []string{ScopeRead, ScopeWrite}, Tables: []string{"action_items", "execution_logs"},
		Events: EventTypes(), Search: []facet.Search{SearchSource},
		Cascade: &facet.Cascade{Table: "action_items", Event: "action-item.deleted", IDPrefix: IDPrefix, IDField: "actionItemId",
			Remove: s.RemoveInProject},
		Operations: func(api.Catalog) []api.Operation { return handlers{s}.operations() },
	}
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
	Sort            string     `query:"sort" enum:"createdAt,updatedAt,dueDate,title" doc:"Default createdAt; items without a due date sort after every date"`
	SortDir         string     `query:"sortDir" enum:"asc,desc" doc:"Default desc (newest first)"`
	IncludeArchived bool       `query:"includeArchived"`
}

// DetailQuery names one action item.
type DetailQuery struct {
	ID string `query:"id" required:"true"`
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
	Title        *string    `json:"title,omitempty"`
	Description  *string    `json:"description,omitempty"`
	Status       *string    `json:"status,omitempty" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED"`
	OwnerHint    *string    `json:"ownerHint,omitempty"`
	ProjectID    *string    `json:"projectId,omitempty"`
	DueDate      *time.Time `json:"dueDate,omitempty"`
}

// SchemaName keeps the document's name of the type it was in package api.
func (BatchOp) SchemaName() string { return "ActionItemBatchOp" }

type handlers struct{ items Store }

func (h handlers) operations() []api.Operation {
	const tag, base = "Action items", "/openapi/v1/resource/action-item/"
	read, write := ScopeRead, ScopeWrite
	idBody := IDRequest{}
	batch := api.Batch[Op]{Kinds: OpKinds, Parse: h.parseOp, Do: h.do, DoAtomic: h.doAtomic}
	return []api.Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listActionItems", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "Action items, sorted and filtered", Query: ListQuery{}, Result: List{}, Status: http.StatusOK, Handler: h.list},
		{Method: http.MethodGet, Path: base + "detail", ID: "getActionItem", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "One action item", Query: DetailQuery{}, Result: View{}, Status: http.StatusOK, Handler: api.Detail(ParseID, h.items.Get, ToView)},
		{Method: http.MethodPost, Path: base + "create", ID: "createActionItem", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Create an action item (source MANUAL)", Body: CreateRequest{}, Result: View{}, Status: http.StatusCreated, Handler: h.create},
		{Method: http.MethodPost, Path: base + "attach-project", ID: "attachActionItemProject", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Attach an action item to a project", Body: AttachRequest{}, Result: View{}, Status: http.StatusCreated, Handler: h.attach},
		{Method: http.MethodPost, Path: base + "update", ID: "updateActionItem", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Edit an action item; status moves follow the table and are logged", Body: UpdateRequest{}, Result: View{}, Status: http.StatusCreated, Handler: h.update},
		{Method: http.MethodPost, Path: base + "archive", ID: "archiveActionItem", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Archive an action item", Body: idBody, Result: View{}, Status: http.StatusCreated, Handler: h.byID(OpArchive)},
		{Method: http.MethodPost, Path: base + "restore", ID: "restoreActionItem", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Restore an archived action item", Body: idBody, Result: View{}, Status: http.StatusCreated, Handler: h.byID(OpRestore)},
		{Method: http.MethodPost, Path: base + "delete", ID: "deleteActionItem", Tag: tag, Auth: api.AuthKey, Scope: write,
			Summary: "Delete an action item and its log for good", Body: idBody, Result: Deleted{}, Status: http.StatusCreated, Handler: h.byID(OpDelete)},
		{Method: http.MethodPost, Path: base + "batch", ID: "batchActionItems", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Up to 100 action-item operations; atomic=true makes it all or nothing", Body: BatchRequest{}, Result: api.BatchResult{},
			Status: http.StatusCreated, Handler: batch.Handler},
		{Method: http.MethodPost, Path: base + "{actionItemId}/log", ID: "addActionItemLog", Tag: tag, Auth: api.AuthKey, Scope: write, Idempotent: true,
			Summary: "Append an execution log entry", Body: LogRequest{}, Result: LogView{}, Status: http.StatusCreated, Handler: h.addLog},
		{Method: http.MethodGet, Path: base + "{actionItemId}/logs", ID: "listActionItemLogs", Tag: tag, Auth: api.AuthKey, Scope: read,
			Summary: "The execution log, oldest first", Query: LogsQuery{}, Result: LogList{}, Status: http.StatusOK, Handler: h.listLogs},
	}
}

func (h handlers) list(c *fiber.Ctx) error {
	q, err := api.DecodeQuery[ListQuery](c)
	if err != nil {
		return err
	}
	f := Filter{Status: q.Status, ProjectID: q.ProjectID, OwnerHint: q.OwnerHint, Q: q.Q, DueAfter: q.DueAfter, DueBefore: q.DueBefore,
		CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore, IncludeArchived: q.IncludeArchived, Sort: q.Sort, Desc: q.SortDir != "asc",
		Limit: q.Limit + 1}
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
	page := List{Items: []View{}}
	if len(items) > q.Limit {
		items = items[:q.Limit]
		raw, _ := json.Marshal(positions[q.Limit-1])
		next := api.EncodeCursor(list, string(raw))
		page.NextCursor = &next
	}
	for _, it := range items {
		page.Items = append(page.Items, ToView(it))
	}
	return api.Respond(c, http.StatusOK, page)
}

func (h handlers) create(c *fiber.Ctx) error {
	req, err := api.DecodeBody[CreateRequest](c)
	if err != nil {
		return err
	}
	in, err := ParseCreate(req)
	if err != nil {
		return err
	}
	return h.run(c, Op{Kind: OpCreate, New: in})
}

func (h handlers) update(c *fiber.Ctx) error {
	req, err := api.DecodeBody[UpdateRequest](c)
	if err != nil {
		return err
	}
	id, err := ParseID(req.ActionItemID)
	if err != nil {
		return err
	}
	f, err := ParseFields(req, api.BodyFields(c))
	if err != nil {
		return err
	}
	return h.run(c, Op{Kind: OpUpdate, ID: id, Fields: f, Author: api.Principal(c).ClientID})
}

func (h handlers) attach(c *fiber.Ctx) error {
	req, err := api.DecodeBody[AttachRequest](c)
	if err != nil {
		return err
	}
	id, err := ParseID(req.ActionItemID)
	if err != nil {
		return err
	}
	pid, err := project.ParseID(req.ProjectID)
	if err != nil {
		return err
	}
	return h.run(c, Op{Kind: OpAttachProject, ID: id, Project: pid})
}

// byID serves the operations whose body only names the item.
func (h handlers) byID(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := api.DecodeBody[IDRequest](c)
		if err != nil {
			return err
		}
		id, err := ParseID(req.ActionItemID)
		if err != nil {
			return err
		}
		return h.run(c, Op{Kind: kind, ID: id, RawID: req.ActionItemID})
	}
}

// run runs one operation as the batch does, in its own transaction.
func (h handlers) run(c *fiber.Ctx, op Op) error {
	shard, ws := api.Tenant(c)
	o, err := h.items.Do(c.UserContext(), shard, ws, op)
	if err != nil {
		return err
	}
	return api.Created(c, outcomeView(o))
}

func outcomeView(o Outcome) any {
	if o.Deleted {
		return Deleted{ID: o.RawID, Deleted: true}
	}
	return ToView(o.Item)
}

func (h handlers) parseOp(c *fiber.Ctx, kind string, fields []byte, has func(string) bool) (Op, error) {
	var req BatchOp
	if err := api.DecodeJSON(fields, &req); err != nil {
		return Op{Kind: kind}, err
	}
	return ParseOp(kind, req, has, api.Principal(c).ClientID)
}

func (h handlers) do(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, op Op) (any, error) {
	o, err := h.items.Do(ctx, shard, ws, op)
	if err != nil {
		return nil, err
	}
	return outcomeView(o), nil
}

func (h handlers) doAtomic(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, ops []Op) ([]any, error) {
	done, err := h.items.DoAtomic(ctx, shard, ws, ops)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(done))
	for i, o := range done {
		out[i] = outcomeView(o)
	}
	return out, nil
}

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
	q, err := api.DecodeQuery[LogsQuery](c)
	if err != nil {
		return err
	}
	after, err := q.Before("logs")
	if err != nil {
		return err
	}
	shard, ws := api.Tenant(c)
	logs, err := h.items.ListLogs(c.UserContext(), shard, ws, id, q.Kind, after, q.Limit+1)
	if err != nil {
		return err
	}
	page := LogList{}
	page.Items, page.NextCursor = api.Page("logs", logs, q.Limit, func(l Log) uuid.UUID { return l.ID }, ToLogView)
	return api.Respond(c, http.StatusOK, page)
}
