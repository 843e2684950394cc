package actionitem

import (
	"testing"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/validate/validatetest"
)

// moves is the status table of docs/decisions/action-items.md, written out
// independently of the code.
var moves = map[[2]string]bool{
	{Open, InProgress}: true, {Open, Done}: true, {Open, Cancelled}: true,
	{InProgress, Done}: true, {InProgress, Open}: true, {InProgress, Cancelled}: true,
	{Done, InProgress}: true,
	{Cancelled, Open}:  true,
}

func TestTransitionTable(t *testing.T) {
	t.Parallel()
	if pairs := validatetest.Transitions(t, Statuses, moves, CheckTransition); pairs != 16 {
		t.Fatalf("%d pairs tried, want 16", pairs)
	}
	if pmapi.ErrorCode(CheckTransition(Open, "PAUSED")) != pmapi.CodeValidation {
		t.Error("an unknown status must be VALIDATION_FAILED")
	}
}

func TestValidLogRefusesServerKindsAndTrims(t *testing.T) {
	t.Parallel()
	validatetest.Entry(t, ValidLog, LogStatusChange, LogNote, "message", 10000)
}

func TestParseTellsNullFromAbsent(t *testing.T) {
	t.Parallel()
	has := validatetest.Has
	if _, err := ParseFields(UpdateRequest{}, has("title")); pmapi.ErrorCode(err) != pmapi.CodeValidation {
		t.Errorf("null title: %v", err)
	}
	f, err := ParseFields(UpdateRequest{}, has("description", "ownerHint"))
	if err != nil || f.Description == nil || *f.Description != nil || f.OwnerHint == nil || f.Title != nil {
		t.Errorf("null description and owner hint clear them, absent title leaves it: %+v %v", f, err)
	}
	noProject := BatchOp{ActionItemID: pmapi.FormatID(IDPrefix, pmapi.NewID())}
	if _, err := ParseOp(OpAttachProject, noProject, has(), "pm_cli_x"); err == nil {
		t.Error("attach-project without projectId accepted")
	}
	op, err := ParseOp(
		OpUpdate,
		BatchOp{ActionItemID: pmapi.FormatID(IDPrefix, pmapi.NewID()), Title: new(" Fix it ")},
		has("title"),
		"pm_cli_x",
	)
	if err != nil || *op.Fields.Title != "Fix it" || op.Author != "pm_cli_x" {
		t.Errorf("update op %+v %v", op, err)
	}
	if _, err := ParseCreate(CreateRequest{Title: " "}); err == nil {
		t.Error("a blank title accepted")
	}
}
