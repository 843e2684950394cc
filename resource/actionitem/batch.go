package actionitem

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/storekit"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/tenant"
)

// Kinds of batch operation, as the `op` field names them.
const (
	OpCreate        = "create"
	OpUpdate        = "update"
	OpAttachProject = "attach-project"
	OpArchive       = "archive"
	OpRestore       = "restore"
	OpDelete        = "delete"
)

// OpKinds lists every kind of batch operation.
var OpKinds = []string{OpCreate, OpUpdate, OpAttachProject, OpArchive, OpRestore, OpDelete}

// Op is one validated operation of a batch.
type Op struct {
	Kind    string
	New     NewItem   // create
	ID      uuid.UUID // every other op
	RawID   string    // the id as given, echoed by a delete
	Fields  Fields    // update
	Project uuid.UUID // attach-project
	Author  string    // who a status move's log entry names
}

// Outcome is what an operation left: the item, or for a delete its id.
type Outcome struct {
	Item    Item
	Deleted bool
	RawID   string
}

// ParseOp validates one operation of the batch body (BatchOp, less op).
func ParseOp(kind string, req BatchOp, has func(string) bool, author string) (Op, error) {
	op := Op{Kind: kind, Author: author, RawID: req.ActionItemID}
	var err error
	if kind == OpCreate {
		op.New, err = ParseCreate(
			CreateRequest{
				Title:       deref(req.Title),
				Description: req.Description,
				OwnerHint:   req.OwnerHint,
				ProjectID:   req.ProjectID,
				DueDate:     req.DueDate,
			},
		)
		return op, err
	}
	if op.ID, err = ParseID(req.ActionItemID); err != nil {
		return op, err
	}
	switch kind {
	case OpUpdate:
		op.Fields, err = ParseFields(
			UpdateRequest{
				Title:       req.Title,
				Description: req.Description,
				Status:      req.Status,
				OwnerHint:   req.OwnerHint,
				DueDate:     req.DueDate,
			},
			has,
		)
	case OpAttachProject:
		if req.ProjectID == nil {
			return op, pmapi.Invalid("projectId", "attach-project needs projectId")
		}
		op.Project, err = project.ParseID(*req.ProjectID)
	}
	return op, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Do runs one operation in its own transaction, as its own endpoint would.
func (s Store) Do(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, op Op) (Outcome, error) {
	return storekit.Do(ctx, shard, ws, op, s.run)
}

// DoAtomic runs ops in order in one transaction: all of them commit, with their
// events, or the first failure (a *storekit.FailedOp) rolls every one back.
func (s Store) DoAtomic(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, ops []Op) ([]Outcome, error) {
	return storekit.DoAtomic(ctx, shard, ws, ops, s.run)
}

func (s Store) run(ctx context.Context, tx pgx.Tx, shard *tenant.Shard, ws uuid.UUID, op Op) (Outcome, error) {
	var it Item
	var err error
	switch op.Kind {
	case OpCreate:
		it, err = s.CreateTx(ctx, tx, shard, ws, op.New)
	case OpUpdate:
		it, err = s.UpdateTx(ctx, tx, shard, ws, op.ID, op.Fields, op.Author)
	case OpAttachProject:
		it, err = s.AttachTx(ctx, tx, shard, ws, op.ID, op.Project)
	case OpArchive, OpRestore:
		it, err = s.SetArchivedTx(ctx, tx, shard, ws, op.ID, op.Kind == OpArchive)
	case OpDelete:
		return Outcome{Deleted: true, RawID: op.RawID}, s.DeleteTx(ctx, tx, shard, ws, op.ID)
	default:
		err = fmt.Errorf("unknown batch operation %q", op.Kind)
	}
	return Outcome{Item: it}, err
}
