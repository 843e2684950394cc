package task

import "github.com/pmapi/pmapi/facet"

// SearchSource makes tasks findable by title and description, which search
// reads from task_search (the store keeps it in step, migration 0015).
var SearchSource = facet.Search{
	Type: "task", Scope: "tasks:read", Table: "tasks", Docs: "task_search", IDPrefix: IDPrefix,
	Title: "d.title", Body: "coalesce(d.description, '')", ProjectID: "r.project_id", Live: "r.archived_at is null",
	Fuzzy:  []string{"d.title", "d.description"},
	Status: "r.status", Statuses: Statuses,
}
