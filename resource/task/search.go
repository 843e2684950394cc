package task

import "github.com/pmapi/pmapi/resource/facet"

// SearchSource makes tasks findable by title and description.
var SearchSource = facet.Search{
	Type: "task", Scope: "tasks:read", Table: "tasks", IDPrefix: IDPrefix,
	Title: "r.title", Body: "coalesce(r.description, '')", ProjectID: "r.project_id", Live: "r.archived_at is null",
	Fuzzy:  []string{"r.title", "r.description"},
	Status: "r.status", Statuses: Statuses,
}
