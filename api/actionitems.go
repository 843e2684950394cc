package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/project"
)

// ActionItemListQuery documents the action-item list's parameters.
type ActionItemListQuery struct {
	ListQuery
	Status          string `query:"status" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED"`
	ProjectID       string `query:"projectId"`
	OwnerHint       string `query:"ownerHint" doc:"Case-insensitive substring of the owner hint"`
	Q               string `query:"q" doc:"Case-insensitive substring of the title or description"`
	DueAfter        string `query:"dueAfter" format:"date-time" doc:"dueDate at or after"`
	DueBefore       string `query:"dueBefore" format:"date-time" doc:"dueDate before"`
	CreatedAfter    string `query:"createdAfter" format:"date-time"`
	CreatedBefore   string `query:"createdBefore" format:"date-time"`
	Sort            string `query:"sort" enum:"createdAt,updatedAt,dueDate,title" doc:"Default createdAt; items without a due date sort after every date"`
	SortDir         string `query:"sortDir" enum:"asc,desc" doc:"Default desc (newest first)"`
	IncludeArchived bool   `query:"includeArchived"`
}

// ActionItemDetailQuery names one action item.
type ActionItemDetailQuery struct {
	ID string `query:"id" required:"true"`
}

// ActionItemLogsQuery documents the log list's parameters.
type ActionItemLogsQuery struct {
	ListQuery
	Kind string `query:"kind" enum:"NOTE,PROGRESS,BLOCKER,EVIDENCE,STATUS_CHANGE"`
}

// ActionItemBatchRequest is the body of the action-item batch.
type ActionItemBatchRequest struct {
	Atomic     bool                `json:"atomic,omitempty" doc:"All or nothing: the first failure rolls every operation back"`
	Operations []ActionItemBatchOp `json:"operations" doc:"1 to 100 operations, run in order"`
}

// ActionItemBatchOp is one operation of a batch: `op` and that operation's fields.
type ActionItemBatchOp struct {
	Op           string     `json:"op" enum:"create,update,attach-project,archive,restore,delete"`
	ActionItemID string     `json:"actionItemId,omitempty" doc:"Every op but create"`
	Title        *string    `json:"title,omitempty"`
	Description  *string    `json:"description,omitempty"`
	Status       *string    `json:"status,omitempty" enum:"OPEN,IN_PROGRESS,DONE,CANCELLED"`
	OwnerHint    *string    `json:"ownerHint,omitempty"`
	ProjectID    *string    `json:"projectId,omitempty"`
	DueDate      *time.Time `json:"dueDate,omitempty"`
}

func (s *Server) actionItemOperations() []Operation {
	const tag, base = "Action items", "/openapi/v1/resource/action-item/"
	read, write := "action-items:read", "action-items:write"
	idBody := actionitem.IDRequest{}
	return []Operation{
		{Method: http.MethodGet, Path: base + "list", ID: "listActionItems", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "Action items, sorted and filtered", Query: ActionItemListQuery{}, Result: actionitem.List{}, Status: http.StatusOK, Handler: s.listActionItems},
		{Method: http.MethodGet, Path: base + "detail", ID: "getActionItem", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "One action item", Query: ActionItemDetailQuery{}, Result: actionitem.View{}, Status: http.StatusOK, Handler: s.getActionItem},
		{Method: http.MethodPost, Path: base + "create", ID: "createActionItem", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Create an action item (source MANUAL)", Body: actionitem.CreateRequest{}, Result: actionitem.View{}, Status: http.StatusCreated, Handler: s.createActionItem},
		{Method: http.MethodPost, Path: base + "attach-project", ID: "attachActionItemProject", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Attach an action item to a project", Body: actionitem.AttachRequest{}, Result: actionitem.View{}, Status: http.StatusCreated, Handler: s.attachActionItem},
		{Method: http.MethodPost, Path: base + "update", ID: "updateActionItem", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Edit an action item; status moves follow the table and are logged", Body: actionitem.UpdateRequest{}, Result: actionitem.View{}, Status: http.StatusCreated, Handler: s.updateActionItem},
		{Method: http.MethodPost, Path: base + "archive", ID: "archiveActionItem", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Archive an action item", Body: idBody, Result: actionitem.View{}, Status: http.StatusCreated, Handler: s.archiveActionItem(true)},
		{Method: http.MethodPost, Path: base + "restore", ID: "restoreActionItem", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Restore an archived action item", Body: idBody, Result: actionitem.View{}, Status: http.StatusCreated, Handler: s.archiveActionItem(false)},
		{Method: http.MethodPost, Path: base + "delete", ID: "deleteActionItem", Tag: tag, Auth: AuthKey, Scope: write,
			Summary: "Delete an action item and its log for good", Body: idBody, Result: actionitem.Deleted{}, Status: http.StatusCreated, Handler: s.deleteActionItem},
		{Method: http.MethodPost, Path: base + "batch", ID: "batchActionItems", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Up to 100 action-item operations; atomic=true makes it all or nothing", Body: ActionItemBatchRequest{}, Result: BatchResult{},
			Status: http.StatusCreated, Handler: s.batchActionItems},
		{Method: http.MethodPost, Path: base + "{actionItemId}/log", ID: "addActionItemLog", Tag: tag, Auth: AuthKey, Scope: write, Idempotent: true,
			Summary: "Append an execution log entry", Body: actionitem.LogRequest{}, Result: actionitem.LogView{}, Status: http.StatusCreated, Handler: s.addActionItemLog},
		{Method: http.MethodGet, Path: base + "{actionItemId}/logs", ID: "listActionItemLogs", Tag: tag, Auth: AuthKey, Scope: read,
			Summary: "The execution log, oldest first", Query: ActionItemLogsQuery{}, Result: actionitem.LogList{}, Status: http.StatusOK, Handler: s.listActionItemLogs},
	}
}

func (s *Server) listActionItems(c *fiber.Ctx) error {
	var f actionitem.Filter
	var err error
	if f.Limit, err = queryLimit(c); err != nil {
		return err
	}
	if f.Status, err = queryEnum(c, "status", actionitem.Statuses...); err != nil {
		return err
	}
	if f.ProjectID, err = queryProject(c, "projectId"); err != nil {
		return err
	}
	for name, dst := range map[string]**time.Time{"dueAfter": &f.DueAfter, "dueBefore": &f.DueBefore, "createdAfter": &f.CreatedAfter, "createdBefore": &f.CreatedBefore} {
		if *dst, err = queryTime(c, name); err != nil {
			return err
		}
	}
	if f.IncludeArchived, err = queryBool(c, "includeArchived"); err != nil {
		return err
	}
	if f.Sort, err = queryEnum(c, "sort", "createdAt", "updatedAt", "dueDate", "title"); err != nil {
		return err
	}
	dir, err := queryEnum(c, "sortDir", "asc", "desc")
	if err != nil {
		return err
	}
	f.Desc = dir != "asc"
	f.OwnerHint, f.Q = c.Query("ownerHint"), c.Query("q")
	// The cursor carries the sort it was made for, so a cursor from another
	// ordering is refused rather than giving a wrong page.
	list := "action-items:" + f.Sort + ":" + dir
	if raw, err := decodeCursor(list, c.Query("cursor")); err != nil {
		return err
	} else if raw != "" {
		var pos actionitem.Position
		if json.Unmarshal([]byte(raw), &pos) != nil {
			return pmapi.Invalid("cursor", "cursor is not one this list issued")
		}
		f.After = &pos
	}
	limit := f.Limit
	f.Limit++
	shard, ws := tenantOf(c)
	items, positions, err := s.actionItems.List(c.UserContext(), shard, ws, f)
	if err != nil {
		return err
	}
	page := actionitem.List{Items: []actionitem.View{}}
	if len(items) > limit {
		items = items[:limit]
		raw, _ := json.Marshal(positions[limit-1])
		next := encodeCursor(list, string(raw))
		page.NextCursor = &next
	}
	for _, it := range items {
		page.Items = append(page.Items, actionitem.ToView(it))
	}
	return respond(c, http.StatusOK, page)
}

func (s *Server) getActionItem(c *fiber.Ctx) error {
	id, err := actionitem.ParseID(c.Query("id"))
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	it, err := s.actionItems.Get(c.UserContext(), shard, ws, id)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, actionitem.ToView(it))
}

// newActionItem validates a create.
func newActionItem(req actionitem.CreateRequest) (actionitem.NewItem, error) {
	in := actionitem.NewItem{Description: req.Description, OwnerHint: req.OwnerHint, DueDate: req.DueDate}
	var err error
	if in.Title, err = actionitem.ValidTitle(req.Title); err != nil {
		return in, err
	}
	if err := actionitem.ValidDescription(req.Description); err != nil {
		return in, err
	}
	if err := actionitem.ValidOwnerHint(req.OwnerHint); err != nil {
		return in, err
	}
	if req.ProjectID != nil {
		id, err := project.ParseID(*req.ProjectID)
		if err != nil {
			return in, err
		}
		in.ProjectID = &id
	}
	return in, nil
}

func (s *Server) createActionItem(c *fiber.Ctx) error {
	req, err := decodeBody[actionitem.CreateRequest](c)
	if err != nil {
		return err
	}
	in, err := newActionItem(req)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	it, err := s.actionItems.Create(c.UserContext(), shard, ws, in)
	if err != nil {
		return err
	}
	return created(c, actionitem.ToView(it))
}

// actionItemFields validates an update; present reports which JSON keys the
// caller sent, so null (clear) differs from absent (keep).
func actionItemFields(req actionitem.UpdateRequest, present func(string) bool) (actionitem.Fields, error) {
	var f actionitem.Fields
	if req.Title != nil {
		t, err := actionitem.ValidTitle(*req.Title)
		if err != nil {
			return f, err
		}
		f.Title = &t
	} else if present("title") {
		return f, pmapi.Invalid("title", "title cannot be null")
	}
	if present("description") {
		if err := actionitem.ValidDescription(req.Description); err != nil {
			return f, err
		}
		f.Description = &req.Description
	}
	if req.Status != nil {
		f.Status = req.Status
	} else if present("status") {
		return f, pmapi.Invalid("status", "status cannot be null")
	}
	if present("ownerHint") {
		if err := actionitem.ValidOwnerHint(req.OwnerHint); err != nil {
			return f, err
		}
		f.OwnerHint = &req.OwnerHint
	}
	if present("dueDate") {
		f.DueDate = &req.DueDate
	}
	return f, nil
}

func (s *Server) updateActionItem(c *fiber.Ctx) error {
	req, err := decodeBody[actionitem.UpdateRequest](c)
	if err != nil {
		return err
	}
	id, err := actionitem.ParseID(req.ActionItemID)
	if err != nil {
		return err
	}
	f, err := actionItemFields(req, func(k string) bool { return bodyHas(c, k) })
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	var it actionitem.Item
	err = shard.Tx(c.UserContext(), ws, func(tx pgx.Tx) error {
		it, err = s.actionItems.UpdateTx(c.UserContext(), tx, shard, ws, id, f, principalOf(c).ClientID)
		return err
	})
	if err != nil {
		return err
	}
	return created(c, actionitem.ToView(it))
}

func (s *Server) attachActionItem(c *fiber.Ctx) error {
	req, err := decodeBody[actionitem.AttachRequest](c)
	if err != nil {
		return err
	}
	id, err := actionitem.ParseID(req.ActionItemID)
	if err != nil {
		return err
	}
	pid, err := project.ParseID(req.ProjectID)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	var it actionitem.Item
	err = shard.Tx(c.UserContext(), ws, func(tx pgx.Tx) error {
		it, err = s.actionItems.AttachTx(c.UserContext(), tx, shard, ws, id, pid)
		return err
	})
	if err != nil {
		return err
	}
	return created(c, actionitem.ToView(it))
}

func (s *Server) archiveActionItem(archived bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := decodeBody[actionitem.IDRequest](c)
		if err != nil {
			return err
		}
		id, err := actionitem.ParseID(req.ActionItemID)
		if err != nil {
			return err
		}
		shard, ws := tenantOf(c)
		var it actionitem.Item
		err = shard.Tx(c.UserContext(), ws, func(tx pgx.Tx) error {
			it, err = s.actionItems.SetArchivedTx(c.UserContext(), tx, shard, ws, id, archived)
			return err
		})
		if err != nil {
			return err
		}
		return created(c, actionitem.ToView(it))
	}
}

func (s *Server) deleteActionItem(c *fiber.Ctx) error {
	req, err := decodeBody[actionitem.IDRequest](c)
	if err != nil {
		return err
	}
	id, err := actionitem.ParseID(req.ActionItemID)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	err = shard.Tx(c.UserContext(), ws, func(tx pgx.Tx) error {
		return s.actionItems.DeleteTx(c.UserContext(), tx, shard, ws, id)
	})
	if err != nil {
		return err
	}
	return created(c, actionitem.Deleted{ID: req.ActionItemID, Deleted: true})
}

func (s *Server) batchActionItems(c *fiber.Ctx) error {
	req, err := decodeBody[ActionItemBatchRequest](c)
	if err != nil {
		return err
	}
	for i, op := range req.Operations {
		switch op.Op {
		case "create", "update", "attach-project", "archive", "restore", "delete":
		default:
			return pmapi.Invalid(fmt.Sprintf("operations[%d].op", i), "op must be create, update, attach-project, archive, restore or delete")
		}
	}
	shard, ws := tenantOf(c)
	author := principalOf(c).ClientID
	raw := rawOperations(c)
	return runBatch(c, req.Atomic, len(req.Operations), func(ctx context.Context, tx pgx.Tx, i int) (any, error) {
		op := req.Operations[i]
		present := func(k string) bool { return i < len(raw) && raw[i][k] != nil }
		if op.Op == "create" {
			in, err := newActionItem(actionitem.CreateRequest{Title: deref(op.Title), Description: op.Description, OwnerHint: op.OwnerHint, ProjectID: op.ProjectID, DueDate: op.DueDate})
			if err != nil {
				return nil, err
			}
			it, err := s.actionItems.CreateTx(ctx, tx, shard, ws, in)
			return actionitem.ToView(it), err
		}
		id, err := actionitem.ParseID(op.ActionItemID)
		if err != nil {
			return nil, err
		}
		var it actionitem.Item
		switch op.Op {
		case "update":
			f, err := actionItemFields(actionitem.UpdateRequest{Title: op.Title, Description: op.Description, Status: op.Status, OwnerHint: op.OwnerHint, DueDate: op.DueDate}, present)
			if err != nil {
				return nil, err
			}
			it, err = s.actionItems.UpdateTx(ctx, tx, shard, ws, id, f, author)
			if err != nil {
				return nil, err
			}
		case "attach-project":
			if op.ProjectID == nil {
				return nil, pmapi.Invalid("projectId", "attach-project needs projectId")
			}
			pid, err := project.ParseID(*op.ProjectID)
			if err != nil {
				return nil, err
			}
			if it, err = s.actionItems.AttachTx(ctx, tx, shard, ws, id, pid); err != nil {
				return nil, err
			}
		case "archive", "restore":
			if it, err = s.actionItems.SetArchivedTx(ctx, tx, shard, ws, id, op.Op == "archive"); err != nil {
				return nil, err
			}
		case "delete":
			if err := s.actionItems.DeleteTx(ctx, tx, shard, ws, id); err != nil {
				return nil, err
			}
			return actionitem.Deleted{ID: op.ActionItemID, Deleted: true}, nil
		}
		return actionitem.ToView(it), nil
	})
}

// rawOperations returns each batch operation as a key map, to tell null from
// absent in updates.
func rawOperations(c *fiber.Ctx) []map[string]json.RawMessage {
	var body struct {
		Operations []map[string]json.RawMessage `json:"operations"`
	}
	_ = json.Unmarshal(c.Body(), &body)
	return body.Operations
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *Server) addActionItemLog(c *fiber.Ctx) error {
	id, err := actionitem.ParseID(c.Params("actionItemId"))
	if err != nil {
		return err
	}
	req, err := decodeBody[actionitem.LogRequest](c)
	if err != nil {
		return err
	}
	msg, err := actionitem.ValidLog(req.Kind, req.Message)
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	l, err := s.actionItems.AddLog(c.UserContext(), shard, ws, id, req.Kind, msg, principalOf(c).ClientID)
	if err != nil {
		return err
	}
	return created(c, actionitem.ToLogView(l))
}

func (s *Server) listActionItemLogs(c *fiber.Ctx) error {
	id, err := actionitem.ParseID(c.Params("actionItemId"))
	if err != nil {
		return err
	}
	limit, err := queryLimit(c)
	if err != nil {
		return err
	}
	kind, err := queryEnum(c, "kind", actionitem.LogKinds...)
	if err != nil {
		return err
	}
	after, err := pageCursor(c, "logs")
	if err != nil {
		return err
	}
	shard, ws := tenantOf(c)
	logs, err := s.actionItems.ListLogs(c.UserContext(), shard, ws, id, kind, after, limit+1)
	if err != nil {
		return err
	}
	page := actionitem.LogList{Items: []actionitem.LogView{}, NextCursor: nextCursor("logs", len(logs), limit, func() uuid.UUID { return logs[limit-1].ID })}
	for i, l := range logs {
		if i == limit {
			break
		}
		page.Items = append(page.Items, actionitem.ToLogView(l))
	}
	return respond(c, http.StatusOK, page)
}
