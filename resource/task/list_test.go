package task_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pmapi/pmapi/resource/event"
	"github.com/pmapi/pmapi/resource/internal/storetest"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/task"
)

// TestListRowsShareNothing: the list reuses one row and its destinations for
// every row it reads (storekit.ListFields), so each task's nullable columns
// must still be its own, null or not, and equal what Get reads.
func TestListRowsShareNothing(t *testing.T) {
	ctx := context.Background()
	f := storetest.New(t, "task list rows")
	p, err := project.Store{Events: event.Discard{}}.Create(ctx, f.Shard, f.WS, project.NewProject{Name: "p", RAGStatus: project.Green})
	if err != nil {
		t.Fatal(err)
	}
	store := task.Store{Events: event.Discard{}}
	for i := range 4 {
		in := task.NewTask{ProjectID: p.ID, Title: fmt.Sprint("task ", i), Priority: 3}
		if i%2 == 0 {
			desc, due := fmt.Sprint("description ", i), time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)
			in.Description, in.DueDate = &desc, &due
		}
		if _, err := store.Create(ctx, f.Shard, f.WS, in); err != nil {
			t.Fatal(err)
		}
	}
	list, err := store.List(ctx, f.Shard, f.WS, task.Filter{Limit: 10})
	if err != nil || len(list) != 4 {
		t.Fatalf("List: %d tasks, %v", len(list), err)
	}
	for _, got := range list {
		want, err := store.Get(ctx, f.Shard, f.WS, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("listed %+v, Get reads %+v", got, want)
		}
	}
	descs := map[*string]bool{}
	for _, got := range list {
		if got.Description != nil {
			descs[got.Description] = true
		}
	}
	if len(descs) != 2 || !slices.IsSortedFunc(list, func(a, b task.Task) int { return bytes.Compare(b.ID[:], a.ID[:]) }) {
		t.Errorf("descriptions %v, order %v: want two of their own, newest first", descs, list)
	}
}
