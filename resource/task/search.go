package task

import "github.com/pmapi/pmapi/resource/search"

// SearchSource makes tasks findable by title and description.
var SearchSource = search.Source{
	Type: "task", Scope: "tasks:read", Table: "tasks", IDPrefix: IDPrefix,
	Title: "r.title", Body: "coalesce(r.description, '')", ProjectID: "r.project_id", Live: "r.archived_at is null",
}
