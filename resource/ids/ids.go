// Package ids holds the prefixes of the resources' public ids: a prefix such as
// "prj_" and the row's UUID as a ULID (pmapi.FormatID). It is a leaf, so a
// package can name another's ids without importing it (action items name the
// analysis, node and suggestion they came from; the analysis package imports
// action items), and the API core can read a query parameter given as an id by
// the noun it is tagged with (api.DecodeQuery's `id:"project"`).
//
// Each resource package re-exports its own prefixes (project.IDPrefix, ...);
// the text of a prefix is written here only.
package ids

import (
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// The prefixes of the resources' ids.
const (
	Project       = "prj_"
	Task          = "tsk_"
	Risk          = "rsk_"
	Note          = "not_"
	ActionItem    = "act_"
	ActionItemLog = "log_"
	RRCA          = "rca_"
	RRCANode      = "nod_"
	Corrective    = "cac_"
	Suggestion    = "lac_"
	Run           = "run_"
)

// byNoun names each resource's prefix by the noun its errors use ("project
// not found", "projectId must be a project id (prj_...)").
var byNoun = map[string]string{
	"project":     Project,
	"task":        Task,
	"risk":        Risk,
	"note":        Note,
	"action item": ActionItem,
	"analysis":    RRCA,
}

// Of is the prefix of the ids of noun, and whether noun names one.
func Of(noun string) (string, bool) {
	p, ok := byNoun[noun]
	return p, ok
}

// Format renders an optional id: nil stays nil.
func Format(prefix string, id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := pmapi.FormatID(prefix, *id)
	return &s
}

// FormatUser renders an optional user id: user ids are plain UUIDs, not
// prefixed; nil stays nil.
func FormatUser(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// Parse reads an optional id with parse (a resource's ParseID): nil stays
// nil.
func Parse(parse func(string) (uuid.UUID, error), s *string) (*uuid.UUID, error) {
	if s == nil {
		return nil, nil
	}
	id, err := parse(*s)
	if err != nil {
		return nil, err
	}
	return &id, nil
}
