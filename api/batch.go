package api

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
)

// MaxBatch is the most operations one batch request may carry.
const MaxBatch = 100

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

// runBatch runs n operations. Non-atomic: each in its own transaction, every
// outcome reported. Atomic: one transaction for all; the first failure rolls
// everything back and the request fails with that operation's error, whose
// details carry its index and every result so far.
func runBatch(c *fiber.Ctx, atomic bool, n int, run func(ctx context.Context, tx pgx.Tx, i int) (any, error)) error {
	if n < 1 || n > MaxBatch {
		return pmapi.Invalid("operations", "operations must hold 1 to %d operations", MaxBatch)
	}
	ctx := c.UserContext()
	shard, ws := tenantOf(c)
	results := make([]BatchItemResult, 0, n)
	if atomic {
		var failed *pmapi.Error
		err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			// A retried transaction (tenant.Shard.Tx) starts the batch over.
			results, failed = results[:0], nil
			for i := 0; i < n; i++ {
				data, err := run(ctx, tx, i)
				if err != nil {
					e := pmapi.AsError(err)
					if e.Code == pmapi.CodeInternal {
						return err
					}
					results = append(results, failedResult(i, e))
					failed = e
					return e
				}
				results = append(results, BatchItemResult{Index: i, Success: true, Data: data})
			}
			return nil
		})
		if failed != nil {
			return failed.With("index", len(results)-1).With("results", results).
				With("message", fmt.Sprintf("operation %d failed; nothing was written", len(results)-1))
		}
		if err != nil {
			return err
		}
		return created(c, BatchResult{Atomic: true, Results: results})
	}
	for i := 0; i < n; i++ {
		var data any
		err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			var err error
			data, err = run(ctx, tx, i)
			return err
		})
		if err != nil {
			e := pmapi.AsError(err)
			if e.Code == pmapi.CodeInternal {
				return err
			}
			results = append(results, failedResult(i, e))
			continue
		}
		results = append(results, BatchItemResult{Index: i, Success: true, Data: data})
	}
	return created(c, BatchResult{Atomic: false, Results: results})
}

func failedResult(i int, e *pmapi.Error) BatchItemResult {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return BatchItemResult{Index: i, Error: &ItemError{Code: string(e.Code), Message: e.Message, Details: details}}
}
