package main

import (
	"strings"
	"testing"
	"time"
)

// The River worker settings: River's 20 workers, a tenth of its 100 ms fetch
// cooldown (which capped a process at 200 jobs a second), bad values named.
func TestJobWorkerSettings(t *testing.T) {
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.JobWorkers != 20 || c.JobFetchCooldown != 10*time.Millisecond {
		t.Errorf("defaults: %d workers, %s cooldown", c.JobWorkers, c.JobFetchCooldown)
	}
	t.Setenv("PMAPI_JOB_WORKERS", "100")
	t.Setenv("PMAPI_JOB_FETCH_COOLDOWN", "100ms")
	if c, err = loadConfig(); err != nil || c.JobWorkers != 100 || c.JobFetchCooldown != 100*time.Millisecond {
		t.Errorf("set: %d %s %v", c.JobWorkers, c.JobFetchCooldown, err)
	}
	for name, bad := range map[string]string{"PMAPI_JOB_WORKERS": "0", "PMAPI_JOB_FETCH_COOLDOWN": "0s"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: %v", name, bad, err)
			}
		})
	}
}
