package rrca

import (
	"testing"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/validate/validatetest"
)

func TestPhasesOnlyMoveForwardPastTheirGates(t *testing.T) {
	open := Facts{}
	for i, from := range Phases[:len(Phases)-1] {
		next, err := CheckAdvance(from, "", Facts{RootCauses: 1, CorrectiveActions: 1})
		if err != nil || next != Phases[i+1] {
			t.Errorf("%s -> %q, %v", from, next, err)
		}
		for _, to := range Phases {
			if to == Phases[i+1] {
				continue
			}
			if _, err := CheckAdvance(from, to, Facts{RootCauses: 1, CorrectiveActions: 1}); pmapi.ErrorCode(
				err,
			) != pmapi.CodeInvalidTransition {
				t.Errorf("%s -> %s allowed: %v", from, to, err)
			}
		}
	}
	if _, err := CheckAdvance(Closed, "", open); pmapi.ErrorCode(err) != pmapi.CodeConflict {
		t.Errorf("advancing CLOSED: %v", err)
	}
	gates := map[string]string{Analyze: GateRootCause, Correct: GateCorrectiveAction, Verify: GateActionsClosed}
	for from, gate := range gates {
		f := Facts{RootCauses: 1, CorrectiveActions: 1}
		switch from {
		case Analyze:
			f.RootCauses = 0
		case Correct:
			f.CorrectiveActions = 0
		case Verify:
			f.OpenActionItems = []string{"act_x"}
		}
		_, err := CheckAdvance(from, "", f)
		e := pmapi.AsError(err)
		if e.Code != pmapi.CodeGateNotMet || e.Details["gate"] != gate {
			t.Errorf("%s: %v, want GATE_NOT_MET %s", from, err, gate)
		}
	}
	for _, from := range []string{Define, Contain} {
		if _, err := CheckAdvance(from, "", open); err != nil {
			t.Errorf("%s has no gate: %v", from, err)
		}
	}
}

func TestNewNodes(t *testing.T) {
	t.Parallel()
	validatetest.Entry(t, ValidNewNode, KindWhySuggestion, KindWhy, "text", 5000)
}
