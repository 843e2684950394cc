package api_test

import (
	"context"

	"github.com/pmapi/pmapi/resource/rrca/suggest"
)

// isoEngine suggests one why on every 5-why run (the deterministic engine
// says nothing when it is not confident, and the run's workspaces all write
// the same few sentences), so that accepting a suggestion always has nodes
// to act on; look-across is the deterministic engine's. The isolation
// property is about who sees what, not about the suggestions' quality.
type isoEngine struct{ suggest.Deterministic }

func (isoEngine) FiveWhy(_ context.Context, in suggest.WhyInput) ([]suggest.Why, error) {
	return []suggest.Why{{Text: "Suggested why of " + in.Problem, Confidence: 1}}, nil
}
