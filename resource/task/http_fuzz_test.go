package task_test

import (
	"bytes"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// The task decoders are fuzzed through the real app: whatever the body, the
// answer is a documented response below 500 (apitest checks every answer against
// the OpenAPI document). Seeds live in testdata/fuzz/<FuzzName>/ and write the
// ids of the tenant's project, task and user as $PRJ, $TSK and $USR, so that
// mutations start from bodies that reach the store.

type fuzzTarget struct {
	tn   *apitest.Tenant
	vars [][2][]byte
}

func newFuzzTarget(f *testing.F) fuzzTarget {
	env := apitest.New(f, func(d *apitest.Config) { d.RateLimitPerMinute = 1_000_000_000 })
	tn := env.NewTenant(f)
	r := tn.Do(f, "POST", apitest.ProjectBase+"create", map[string]any{"name": "fuzz"})
	if r.Status != 201 {
		f.Fatalf("project: %d %s", r.Status, r.Raw)
	}
	prj := r.Str("id")
	r = tn.Do(f, "POST", apitest.TaskBase+"create", map[string]any{"projectId": prj, "title": "fuzz"})
	if r.Status != 201 {
		f.Fatalf("task: %d %s", r.Status, r.Raw)
	}
	return fuzzTarget{tn: tn, vars: [][2][]byte{
		{[]byte("$PRJ"), []byte(prj)}, {[]byte("$TSK"), []byte(r.Str("id"))}, {[]byte("$USR"), []byte(tn.UserID)},
	}}
}

func (ft fuzzTarget) send(t *testing.T, method, path string, body []byte) {
	for _, v := range ft.vars {
		body = bytes.ReplaceAll(body, v[0], v[1])
	}
	r := ft.tn.Do(t, method, path, body)
	if r.Status >= 500 {
		t.Fatalf("%s %s answered %d to %q: %s", method, path, r.Status, body, r.Raw)
	}
}

func FuzzTaskCreate(f *testing.F) {
	ft := newFuzzTarget(f)
	f.Fuzz(func(t *testing.T, body []byte) { ft.send(t, "POST", apitest.TaskBase+"create", body) })
}

func FuzzTaskUpdate(f *testing.F) {
	ft := newFuzzTarget(f)
	f.Fuzz(func(t *testing.T, body []byte) { ft.send(t, "PATCH", apitest.TaskBase+"update", body) })
}

func FuzzTaskBatch(f *testing.F) {
	ft := newFuzzTarget(f)
	f.Fuzz(func(t *testing.T, body []byte) { ft.send(t, "POST", apitest.TaskBase+"batch", body) })
}
