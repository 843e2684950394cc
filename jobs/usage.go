package jobs

import (
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant/usage"
)

// countFanout adds a recorded fan-out to the workspace's usage: its events,
// and each delivery it sent with whether it failed. Counted once recorded,
// so a run that dies before recording and is rescued counts only its rerun.
func countFanout(ws uuid.UUID, events int, runs []webhook.Fanned) {
	now := time.Now()
	c := usage.Process()
	c.Events(ws, events, now)
	for _, run := range runs {
		for _, sent := range run.Sent {
			if sent != nil {
				c.Delivery(ws, run.Plan.Sub.ClientID, !sent.Result.OK(), now)
			}
		}
	}
}

// countRetry adds the deliveries a recorded retry run sent.
func countRetry(ws uuid.UUID, sent []webhook.RetrySent) {
	now := time.Now()
	for _, s := range sent {
		usage.Process().Delivery(ws, s.Delivery.ClientID, !s.Result.OK(), now)
	}
}
