package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/task"
)

// batchBody is what batchTasks decodes; task.BatchRequest documents it. The
// operations stay raw until their `op` says which body each one is.
type batchBody struct {
	Atomic     bool              `json:"atomic"`
	Operations []json.RawMessage `json:"operations"`
}

// codeNotApplied marks, in a failed atomic batch, the operations that were not
// the cause but were rolled back or never run.
const codeNotApplied = "NOT_APPLIED"

func (s *Server) batchTasks(c *fiber.Ctx) error {
	body, err := decodeBody[batchBody](c)
	if err != nil {
		return err
	}
	if n := len(body.Operations); n < 1 || n > task.MaxBatch {
		return pmapi.Invalid("operations", "operations must hold 1 to %d operations, not %d", task.MaxBatch, n).With("max", task.MaxBatch)
	}
	ops := make([]task.Op, len(body.Operations))
	invalid := make([]error, len(body.Operations))
	for i, raw := range body.Operations {
		kind, fields, err := batchOpKind(i, raw)
		if err != nil {
			return err
		}
		ops[i], invalid[i] = parseBatchOp(kind, fields)
	}
	shard, ws := tenantOf(c)
	ctx := c.UserContext()
	results := make([]task.BatchResult, len(ops))
	if !body.Atomic {
		for i, op := range ops {
			err := invalid[i]
			var t task.Task
			if err == nil {
				t, err = s.tasks.Do(ctx, shard, ws, op)
			}
			results[i] = s.batchResult(c, i, t, err)
		}
		return created(c, task.BatchResponse{Atomic: false, Results: results})
	}
	if first := slices.IndexFunc(invalid, func(err error) bool { return err != nil }); first >= 0 {
		for i, err := range invalid {
			if err != nil {
				results[i] = s.batchResult(c, i, task.Task{}, err)
			} else {
				results[i] = notApplied(i, first)
			}
		}
		return atomicFailure(first, invalid[first], results)
	}
	done, err := s.tasks.DoAtomic(ctx, shard, ws, ops)
	var failed *task.FailedOp
	if errors.As(err, &failed) && pmapi.ErrorCode(failed.Err) != pmapi.CodeInternal {
		for i := range results {
			results[i] = notApplied(i, failed.Index)
		}
		results[failed.Index] = s.batchResult(c, failed.Index, task.Task{}, failed.Err)
		return atomicFailure(failed.Index, failed.Err, results)
	}
	if err != nil {
		return err
	}
	for i, t := range done {
		results[i] = s.batchResult(c, i, t, nil)
	}
	return created(c, task.BatchResponse{Atomic: true, Results: results})
}

// batchOpKind reads an operation's `op` and its other fields. A malformed
// operation or an unknown op refuses the whole batch, since the request itself
// is then not one this endpoint understands.
func batchOpKind(i int, raw json.RawMessage) (string, map[string]json.RawMessage, error) {
	field := fmt.Sprintf("operations[%d]", i)
	var fields map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		return "", nil, pmapi.Invalid(field, "%s must be an object with an op", field)
	}
	var kind string
	if json.Unmarshal(fields["op"], &kind) != nil || !slices.Contains(task.OpKinds, kind) {
		return "", nil, pmapi.Invalid(field+".op", "%s.op must be one of %v", field, task.OpKinds).With("allowed", task.OpKinds)
	}
	delete(fields, "op")
	return kind, fields, nil
}

// parseBatchOp decodes and validates one operation exactly as its own endpoint
// would decode its body.
func parseBatchOp(kind string, fields map[string]json.RawMessage) (task.Op, error) {
	op := task.Op{Kind: kind}
	body, err := json.Marshal(fields)
	if err != nil {
		return op, err
	}
	has := func(f string) bool { _, ok := fields[f]; return ok }
	switch kind {
	case task.OpCreate:
		var req task.CreateRequest
		if err := decodeJSON(body, &req); err != nil {
			return op, err
		}
		op.New, err = task.ParseCreate(req, has)
	case task.OpUpdate:
		var req task.UpdateRequest
		if err := decodeJSON(body, &req); err != nil {
			return op, err
		}
		op.ID, op.Changes, err = task.ParseUpdate(req, has)
	default:
		var req task.IDRequest
		if err := decodeJSON(body, &req); err != nil {
			return op, err
		}
		op.ID, err = task.ParseIDRequest(req)
	}
	return op, err
}

// batchResult reports one operation. An internal failure is logged with the
// request id and shown without its cause, as a whole request's would be.
func (s *Server) batchResult(c *fiber.Ctx, i int, t task.Task, err error) task.BatchResult {
	if err == nil {
		v := task.ToView(t)
		return task.BatchResult{Index: i, Success: true, Data: &v}
	}
	e := pmapi.AsError(err)
	if StatusOf(e.Code) >= 500 {
		s.Log.Error("batch operation failed", "requestId", requestID(c), "route", routeOf(c), "index", i, "cause", causeText(e))
		e = &pmapi.Error{Code: e.Code, Message: "internal error; quote the request id when reporting it"}
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return task.BatchResult{Index: i, Error: &task.ItemError{Code: string(e.Code), Message: e.Message, Details: details}}
}

func notApplied(i, failed int) task.BatchResult {
	return task.BatchResult{Index: i, Error: &task.ItemError{Code: codeNotApplied,
		Message: fmt.Sprintf("not applied: operation %d failed and the batch is atomic", failed), Details: map[string]any{}}}
}

// atomicFailure answers a failed atomic batch with the failing operation's own
// status and code, adding which one it was and every operation's result.
func atomicFailure(index int, cause error, results []task.BatchResult) error {
	e := pmapi.AsError(cause)
	out := pmapi.Errorf(e.Code, "operation %d: %s; the batch is atomic, so nothing was written", index, e.Message)
	for k, v := range e.Details {
		out = out.With(k, v)
	}
	return out.With("index", index).With("results", results)
}
