package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// MaxBatch is the most operations one batch request may carry.
const MaxBatch = 100

// codeNotApplied marks, in a failed atomic batch, the operations that were not
// the cause but were rolled back or never run.
const codeNotApplied = "NOT_APPLIED"

// Batch is one resource's batch route for the one batch engine: every batch
// answers in the same shape and fails the same way
// (docs/decisions/tasks-risks-notes.md). Op is the resource's validated operation and T what one operation
// gives; the store runs them and owns the transactions.
type Batch[Op, T any] struct {
	// Kinds are the values of each operation's `op`.
	Kinds []string
	// Parse makes the operation of kind from its other fields, as its own
	// endpoint makes it of its body: decode reads the fields strictly into a
	// request (as DecodeBody reads a body), has tells which ones are given.
	// Its error is the operation's.
	Parse func(c *fiber.Ctx, kind string, decode func(req any) error, has func(string) bool) (Op, error)
	// Do runs one operation in a transaction of its own.
	Do func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, op Op) (T, error)
	// DoAtomic runs every operation in one transaction; when one fails nothing
	// is written and the error says which (it has a FailedIndex() int method).
	DoAtomic func(ctx context.Context, shard *tenant.Shard, ws uuid.UUID, ops []Op) ([]T, error)
	// View is an operation's data in its result.
	View func(T) any
}

// BatchItemResult is the outcome of one operation of a batch.
type BatchItemResult struct {
	Index   int        `json:"index"`
	Success bool       `json:"success"`
	Data    any        `json:"data,omitempty" doc:"The resource after the operation (on success)"`
	Error   *ItemError `json:"error,omitempty" doc:"Why the operation failed"`
}

// ItemError is the error of one batch operation, shaped like the envelope's.
type ItemError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// BatchResult answers a batch.
type BatchResult struct {
	Atomic  bool              `json:"atomic"`
	Results []BatchItemResult `json:"results"`
}

// failedOp is how a store's atomic run says which operation failed.
type failedOp interface {
	error
	FailedIndex() int
	Unwrap() error
}

// batchBody is what every batch decodes: the operations stay raw until their
// `op` says which body each one is.
type batchBody struct {
	Atomic     bool              `json:"atomic"`
	Operations []json.RawMessage `json:"operations"`
}

// Handler serves the batch: a malformed batch (no operations or too many, an
// operation that is not an object, a missing or unknown op) is refused whole;
// otherwise non-atomic batches run each operation on its own and report every
// outcome, atomic ones validate all first and then run all or nothing.
func (b Batch[Op, T]) Handler(c *fiber.Ctx) error {
	body, err := decodeBody[batchBody](c)
	if err != nil {
		return err
	}
	if n := len(body.Operations); n < 1 || n > MaxBatch {
		return pmapi.Invalid("operations", "operations must hold 1 to %d operations, not %d", MaxBatch, n).
			With("max", MaxBatch)
	}
	ops := make([]Op, len(body.Operations))
	invalid := make([]error, len(body.Operations))
	for i, raw := range body.Operations {
		kind, fields, err := b.opKind(i, raw)
		if err != nil {
			return err
		}
		object, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		decode := func(req any) error { return decodeJSON(object, req) }
		has := func(f string) bool { _, ok := fields[f]; return ok }
		ops[i], invalid[i] = b.Parse(c, kind, decode, has)
	}
	shard, ws := Tenant(c)
	ctx := c.UserContext()
	results := make([]BatchItemResult, len(ops))
	if !body.Atomic {
		for i, op := range ops {
			err := invalid[i]
			var data any
			if err == nil {
				var done T
				if done, err = b.Do(ctx, shard, ws, op); err == nil {
					data = b.View(done)
				}
			}
			results[i] = itemResult(c, i, data, err)
		}
		return Created(c, BatchResult{Atomic: false, Results: results})
	}
	if first := slices.IndexFunc(invalid, func(err error) bool { return err != nil }); first >= 0 {
		for i, err := range invalid {
			if err != nil {
				results[i] = itemResult(c, i, nil, err)
			} else {
				results[i] = notApplied(i, first)
			}
		}
		return atomicFailure(first, invalid[first], results)
	}
	done, err := b.DoAtomic(ctx, shard, ws, ops)
	var failed failedOp
	if errors.As(err, &failed) && pmapi.ErrorCode(failed.Unwrap()) != pmapi.CodeInternal {
		at := failed.FailedIndex()
		for i := range results {
			results[i] = notApplied(i, at)
		}
		results[at] = itemResult(c, at, nil, failed.Unwrap())
		return atomicFailure(at, failed.Unwrap(), results)
	}
	if err != nil {
		return err
	}
	for i, d := range done {
		results[i] = itemResult(c, i, b.View(d), nil)
	}
	return Created(c, BatchResult{Atomic: true, Results: results})
}

// opKind reads an operation's `op` and its other fields. A malformed
// operation or an unknown op refuses the whole batch, since the request itself
// is then not one this endpoint understands.
func (b Batch[Op, T]) opKind(i int, raw json.RawMessage) (string, map[string]json.RawMessage, error) {
	field := fmt.Sprintf("operations[%d]", i)
	var fields map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		return "", nil, pmapi.Invalid(field, "%s must be an object with an op", field)
	}
	var kind string
	if json.Unmarshal(fields["op"], &kind) != nil || !slices.Contains(b.Kinds, kind) {
		return "", nil, pmapi.Invalid(field+".op", "%s.op must be one of %v", field, b.Kinds).With("allowed", b.Kinds)
	}
	delete(fields, "op")
	return kind, fields, nil
}

// itemResult reports one operation. An internal failure is logged with the
// request id and shown without its cause, as a whole request's would be.
func itemResult(c *fiber.Ctx, i int, data any, err error) BatchItemResult {
	if err == nil {
		return BatchItemResult{Index: i, Success: true, Data: data}
	}
	e := pmapi.AsError(tenant.DBError(err))
	if StatusOf(e.Code) >= 500 {
		logOf(c).Error("batch operation failed",
			"requestId", requestID(c), "route", routeOf(c), "index", i, "cause", causeText(e))
		e = &pmapi.Error{Code: e.Code, Message: safeMessage(StatusOf(e.Code))}
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return BatchItemResult{Index: i, Error: &ItemError{Code: string(e.Code), Message: e.Message, Details: details}}
}

func notApplied(i, failed int) BatchItemResult {
	return BatchItemResult{Index: i, Error: &ItemError{Code: codeNotApplied,
		Message: fmt.Sprintf("not applied: operation %d failed and the batch is atomic", failed),
		Details: map[string]any{}}}
}

// atomicFailure answers a failed atomic batch with the failing operation's own
// status and code, adding which one it was and every operation's result.
func atomicFailure(index int, cause error, results []BatchItemResult) error {
	e := pmapi.AsError(cause)
	out := pmapi.Errorf(e.Code, "operation %d: %s; the batch is atomic, so nothing was written", index, e.Message)
	for k, v := range e.Details {
		out = out.With(k, v)
	}
	return out.With("index", index).With("results", results)
}

const localLog = "pmapi.log"

// logOf is the server's logger, for handlers that report a failure without
// failing the request (a batch operation).
func logOf(c *fiber.Ctx) *slog.Logger {
	if l, ok := c.Locals(localLog).(*slog.Logger); ok {
		return l
	}
	return slog.New(slog.DiscardHandler)
}
