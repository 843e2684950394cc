package task_test

import (
	"context"
	"testing"

	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/testkit/storetest"
	"github.com/pmapi/pmapi/resource/project"
)

// inProject makes a workspace named name holding one project for a test's
// tasks.
func inProject(t testing.TB, name string) (storetest.Fixture, project.Project) {
	t.Helper()
	f := storetest.New(t, name)
	p, err := project.Store{
		Events: event.Discard{},
	}.Create(
		context.Background(),
		f.Shard,
		f.WS,
		project.NewProject{Settings: project.Settings{Name: "p", RAGStatus: project.Green}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}
