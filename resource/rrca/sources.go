package rrca

import (
	"errors"
	"strings"

	"github.com/pmapi/pmapi/facet"
)

// Sources are what analyses read of other resources' rows, each described as
// its resource describes itself to search (facet.Search), so that rrca
// composes its statements from them and names no other package's table
// (docs/decisions/rrca.md). Whoever builds a Store hands them
// in: resource/registry for the API, cmd/pmapi for the workers.
type Sources struct {
	// Candidates are ranked beside analyses by 5-why and look-across (risks,
	// tasks): Title is what a suggestion shows, Title and Body the text
	// compared, ProjectID the project look-across groups by, Live the rows
	// read.
	Candidates []facet.Search
	// Projects names the project look-across groups by (Title) and keeps the
	// live ones (Live); its ProjectID is the project's own id.
	Projects facet.Search
	// ActionItems give a corrective action its item's Title and Status.
	ActionItems facet.Search
}

// errNoSources is a Store built without its Sources: its statements would
// name no table, so it refuses before reading.
var errNoSources = errors.New(
	"rrca: Store.Sources names no project or action item source (resource/registry.RRCASources)",
)

func (s Sources) check() error {
	if s.Projects.Table == "" || s.ActionItems.Table == "" {
		return errNoSources
	}
	return nil
}

// prefix is the id prefix of a candidate row of type typ.
func (s Sources) prefix(typ string) string {
	switch typ {
	case "rrca":
		return IDPrefix
	case "node":
		return NodeIDPrefix
	}
	for _, c := range s.Candidates {
		if c.Type == typ {
			return c.IDPrefix
		}
	}
	return ""
}

// candidates is one select a candidate source, each row (type, id,
// project_id, title, doc) with doc the text compared, joined by union all
// and followed by own (rrca's own rows, of the same columns) when it is not
// "": analyses last, as before the sources, so that rows of equal score come
// in the same order.
func (s Sources) candidates(own string) string {
	parts := make([]string, 0, len(s.Candidates)+1)
	for _, c := range s.Candidates {
		parts = append(
			parts,
			"select '"+c.Type+"'::text as type, r.id, "+c.ProjectID+" as project_id, "+c.Title+" as title, ("+
				c.Title+") || ' ' || ("+c.Body+") as doc from "+c.From()+" "+c.Live,
		)
	}
	if own != "" {
		parts = append(parts, own)
	}
	return strings.Join(parts, " union all ")
}

// liveProjects is the live projects as (id, name), for a join.
func (s Sources) liveProjects() string {
	p := s.Projects
	return "(select " + p.ProjectID + " as id, " + p.Title + " as name from " + p.From() + " " + p.Live + ")"
}

// itemJoin joins each corrective action c to its action item i (i.title,
// i.status), null when it has none or the item is gone.
func (s Sources) itemJoin() string {
	a := s.ActionItems
	return "left join lateral (select " + a.Title + " as title, " + a.Status + " as status from " + a.From() +
		" r.id = c.action_item_id) i on true"
}
