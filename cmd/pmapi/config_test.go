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

// The Citus settings: routing on and the plan cache left to the release by
// default; the node addresses read as pairs; bad values named.
func TestCitusSettings(t *testing.T) {
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !c.CitusRouting || c.CitusPlanCache.String() != "auto" || len(c.CitusNodes) != 0 {
		t.Errorf("defaults: routing %v, plan cache %s, nodes %v", c.CitusRouting, c.CitusPlanCache, c.CitusNodes)
	}
	t.Setenv("PMAPI_CITUS_ROUTING", "false")
	t.Setenv("PMAPI_CITUS_PLAN_CACHE", "on")
	t.Setenv("PMAPI_CITUS_NODES", "w1.internal:5432=10.0.0.5:6432, w2.internal:5432=10.0.0.6:6432")
	c, err = loadConfig()
	if err != nil || c.CitusRouting || c.CitusPlanCache.String() != "on" ||
		c.CitusNodes["w1.internal:5432"] != "10.0.0.5:6432" || c.CitusNodes["w2.internal:5432"] != "10.0.0.6:6432" {
		t.Errorf("set: routing %v, plan cache %s, nodes %v, %v", c.CitusRouting, c.CitusPlanCache, c.CitusNodes, err)
	}
	for name, bad := range map[string]string{"PMAPI_CITUS_ROUTING": "sometimes", "PMAPI_CITUS_PLAN_CACHE": "always",
		"PMAPI_CITUS_NODES": "w1.internal=10.0.0.5:6432"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: %v", name, bad, err)
			}
		})
	}
}

// The event retention: 30 days by default; less than a day is refused at
// start with the setting named, since a day is one partition.
func TestEventRetentionSetting(t *testing.T) {
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.EventRetention != 720*time.Hour {
		t.Errorf("default: %s, want 720h", c.EventRetention)
	}
	t.Setenv("PMAPI_EVENT_RETENTION", "24h")
	if c, err = loadConfig(); err != nil || c.EventRetention != 24*time.Hour {
		t.Errorf("24h: %s %v", c.EventRetention, err)
	}
	for _, bad := range []string{"23h59m", "0s", "-1h", "thirty days"} {
		t.Run(bad, func(t *testing.T) {
			t.Setenv("PMAPI_EVENT_RETENTION", bad)
			_, err := loadConfig()
			if err == nil || !strings.Contains(err.Error(), "PMAPI_EVENT_RETENTION must be a duration of at least 24h") {
				t.Errorf("%s: %v", bad, err)
			}
		})
	}
}

// The shared rate budget's heartbeat and the usage flush: 2 s and a minute by
// default, bad or out-of-range values named.
func TestReplicaAndUsageSettings(t *testing.T) {
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.ReplicaHeartbeat != 2*time.Second || c.UsageFlush != time.Minute {
		t.Errorf("defaults: heartbeat %s, flush %s", c.ReplicaHeartbeat, c.UsageFlush)
	}
	t.Setenv("PMAPI_REPLICA_HEARTBEAT", "500ms")
	t.Setenv("PMAPI_USAGE_FLUSH", "10s")
	if c, err = loadConfig(); err != nil || c.ReplicaHeartbeat != 500*time.Millisecond || c.UsageFlush != 10*time.Second {
		t.Errorf("set: %s %s %v", c.ReplicaHeartbeat, c.UsageFlush, err)
	}
	for _, bad := range []struct{ name, value string }{
		{"PMAPI_REPLICA_HEARTBEAT", "10ms"}, {"PMAPI_REPLICA_HEARTBEAT", "often"},
		{"PMAPI_USAGE_FLUSH", "2h"}, {"PMAPI_USAGE_FLUSH", "0s"},
	} {
		t.Run(bad.name+"="+bad.value, func(t *testing.T) {
			t.Setenv(bad.name, bad.value)
			if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), bad.name) {
				t.Errorf("%s=%s: %v", bad.name, bad.value, err)
			}
		})
	}
}
