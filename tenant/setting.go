package tenant

import (
	"fmt"
	"regexp"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// SettingMode chooses how the workspace reaches PostgreSQL.
type SettingMode int

const (
	// SetConfig uses set_config('pmapi.workspace_id', $1, true): parameterised and
	// local to the transaction. The default.
	SetConfig SettingMode = iota
	// SetLocal makes a SET LOCAL of the workspace (pmapi_bind_workspace, from
	// a parameter). Citus propagates SET LOCAL to worker nodes (with
	// citus.propagate_set_commands = 'local') but not set_config, so
	// distributed deployments choose this mode.
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
// In SetLocal mode it is pmapi_bind_workspace (migration 0020), whose SET
// LOCAL Citus carries to other nodes; with hold pmapi_hold_workspace, which
// also takes the workspace's placement lock for the transaction: a routed
// write on Citus then never starts a statement while its shard group is being
// split or moved (Shard.Route). Only a write on Citus holds: the lock is
// Citus's, and a security definer function costs a read about 35 µs more.
//
// The call carries a WHERE clause because Citus takes `select f($1)` of a
// function it has distributed (both are: Citus distributes every function
// made on the coordinator) for a call it might delegate to a worker, and for
// any such call with a parameter it makes PostgreSQL plan every execution
// anew. A query with a WHERE clause is never delegated, so the statement
// keeps its generic plan and the node spends no planner time on it (about
// 7 % of a routed read's PostgreSQL CPU, measured with perf).
func (m SettingMode) queueSetting(b *pgx.Batch, workspace uuid.UUID, hold bool) {
	if m == SetLocal && hold {
		b.Queue(holdWorkspaceSQL, workspace)
		return
	}
	if m == SetLocal {
		b.Queue(bindWorkspaceSQL, workspace)
		return
	}
	b.Queue("select set_config('pmapi.workspace_id', $1, true)", workspace.String())
}

// The statements that bind a SetLocal transaction to its workspace; $1 is a
// workspace id, never null, so their WHERE clause (see queueSetting) holds.
const (
	bindWorkspaceSQL = "select pmapi_bind_workspace($1) where $1 is not null"
	holdWorkspaceSQL = "select pmapi_hold_workspace($1) where $1 is not null"
)

// queueSettingWith is SetConfig mode's binding of the workspace with sets in
// force too, all in the workspace's own statement (Shard.ReadWith): each
// setting queued apart would cost PostgreSQL and pgx a statement more.
func queueSettingWith(b *pgx.Batch, workspace uuid.UUID, sets []LocalSetting) {
	sql, args := "select set_config('pmapi.workspace_id', $1, true)", make([]any, 1, 1+2*len(sets))
	args[0] = workspace.String()
	for _, set := range sets {
		sql += fmt.Sprintf(", set_config($%d, $%d, true)", len(args)+1, len(args)+2)
		args = append(args, set.name, set.value)
	}
	b.Queue(sql, args...)
}

// LocalSetting is a PostgreSQL setting for one transaction, checked so that
// SetLocal mode may inline it (SET LOCAL takes no parameters).
type LocalSetting struct{ name, value string }

var (
	settingName  = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$`)
	settingValue = regexp.MustCompile(`^[A-Za-z0-9_.:+-]{1,64}$`)
)

// NewLocalSetting checks a setting's name and value: letters, digits and a few
// marks, never a quote, a backslash or a space. The workspace setting is the
// shard's own and is refused.
func NewLocalSetting(name, value string) (LocalSetting, error) {
	if !settingName.MatchString(name) || name == "pmapi.workspace_id" {
		return LocalSetting{}, fmt.Errorf("tenant: %q cannot be set as a local setting", name)
	}
	if !settingValue.MatchString(value) {
		return LocalSetting{}, fmt.Errorf("tenant: %q is not a plain setting value", value)
	}
	return LocalSetting{name: name, value: value}, nil
}

// MustLocalSetting is NewLocalSetting for settings fixed in the code.
func MustLocalSetting(name, value string) LocalSetting {
	s, err := NewLocalSetting(name, value)
	if err != nil {
		panic(err)
	}
	return s
}

// Mode is how the shard binds its workspace: SetLocal on Citus.
func (s *Shard) Mode() SettingMode { return s.mode }

// QueueLocalSetting queues the statement that sets set until the transaction
// ends, the way the shard binds its workspace: set_config in SetConfig mode,
// SET LOCAL in SetLocal mode, which Citus propagates to the worker nodes that
// run the transaction's statements (set_config never reaches them, and they
// would silently use the setting's default).
func (s *Shard) QueueLocalSetting(b *pgx.Batch, set LocalSetting) {
	if s.mode == SetLocal {
		b.Queue("set local " + set.name + " = '" + set.value + "'")
		return
	}
	b.Queue("select set_config($1, $2, true)", set.name, set.value)
}
