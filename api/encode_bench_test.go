package api_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"
	jsoniter "github.com/json-iterator/go"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/task"
)

// listPage is a task list's answer as the server encodes it: the envelope
// around 50 tasks with every field filled as the benchmark's are.
func listPage() any {
	desc := "Replace the worn coupling & check the <alignment> after the run-in"
	due := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	var rows []task.Task
	for i := range 50 {
		a := uuid.New()
		rows = append(
			rows,
			task.Task{ID: uuid.Must(uuid.NewV7()), ProjectID: uuid.New(), Title: "Task number " + string(rune('A'+i%26)),
				Description: &desc, Status: "IN_PROGRESS", Priority: 3, AssigneeID: &a, DueDate: &due,
				CreatedAt: time.Now(), UpdatedAt: time.Now()},
		)
	}
	views := make([]task.View, 0, len(rows))
	for _, r := range rows {
		views = append(views, task.ToView(r))
	}
	next := "eyJsIjoidGFza3MiLCJhIjoiMDE5MzAwMDAtMDAwMC03MDAwLTgwMDAtMDAwMDAwMDAwMDAwIn0"
	return struct {
		Success bool `json:"success"`
		Data    any  `json:"data"`
	}{true, task.List{Items: views, NextCursor: &next}}
}

var encoders = map[string]func(any) ([]byte, error){
	"encoding/json": json.Marshal,
	"goccy/go-json": gojson.Marshal,
	"json-iterator": jsoniter.ConfigCompatibleWithStandardLibrary.Marshal,
}

// TestEncodersAgree: the encoder the server uses writes what encoding/json
// writes, byte for byte (HTML escaping, times, null pointers).
func TestEncodersAgree(t *testing.T) {
	page := listPage()
	want, _ := json.Marshal(page)
	for name, enc := range encoders {
		got, err := enc(page)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from encoding/json (%v):\n%s\n%s", name, err, got, want)
		}
	}
}

// BenchmarkEncodeListPage: go test -run '^$' -bench EncodeListPage ./api/
func BenchmarkEncodeListPage(b *testing.B) {
	page := listPage()
	for name, enc := range encoders {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := enc(page); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
