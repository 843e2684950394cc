package main

import (
	"github.com/pmapi/pmapi/api/idempotency"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/jobs"
)

// maintenanceSweeps names every owner's deletion of expired rows for the
// maintenance job: each package runs the SQL of its own tables.
func maintenanceSweeps() jobs.Sweeps {
	return jobs.Sweeps{
		Workspace: []jobs.WorkspaceSweep{authz.SweepSessions, idempotency.Sweep, authz.SweepDeviceCodes},
		Directory: []jobs.DirectorySweep{authz.SweepUserCodes},
	}
}
