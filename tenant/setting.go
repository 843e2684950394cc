package tenant

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// SettingMode chooses how the workspace reaches PostgreSQL.
type SettingMode int

const (
	// SetConfig uses set_config('pmapi.workspace_id', $1, true): parameterised and
	// local to the transaction. The default.
	SetConfig SettingMode = iota
	// SetLocal uses SET LOCAL with the validated uuid inlined. Citus propagates SET
	// LOCAL to worker nodes (with citus.propagate_set_commands = 'local') but not
	// set_config, so distributed deployments choose this mode.
	SetLocal
)

// ParseSettingMode reads PMAPI_TENANT_SETTING.
func ParseSettingMode(s string) (SettingMode, error) {
	switch s {
	case "", "set_config":
		return SetConfig, nil
	case "set_local":
		return SetLocal, nil
	}
	return 0, fmt.Errorf("PMAPI_TENANT_SETTING must be set_config or set_local, not %q", s)
}

// String is the mode's PMAPI_TENANT_SETTING value.
func (m SettingMode) String() string {
	if m == SetLocal {
		return "set_local"
	}
	return "set_config"
}

// queueSetting queues the statement that binds the transaction to workspace.
// Inlining is safe in SetLocal mode only because a uuid.UUID prints as hex and
// dashes, never a quote.
func (m SettingMode) queueSetting(b *pgx.Batch, workspace uuid.UUID) {
	if m == SetLocal {
		b.Queue("set local pmapi.workspace_id = '" + workspace.String() + "'")
		return
	}
	b.Queue("select set_config('pmapi.workspace_id', $1, true)", workspace.String())
}
