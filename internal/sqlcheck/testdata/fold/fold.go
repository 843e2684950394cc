package fold

import (
	"fmt"
	"strings"

	in "example.com/fold/inner"
)

const columns = "t.id, t.title"

const get = "select " + columns + " from tasks t where t.workspace_id = $1"

func run(table string, lock, archived bool, where []string) {
	exec(get + " and t.id = $2")
	exec(fmt.Sprintf("select %s from %s r where r.workspace_id = $1 limit %d", columns, table, 10))
	exec("select " + in.Columns + " from items i where " + strings.Join(where, " and "))
	sql := "select 1 from tasks where workspace_id = $1"
	if lock {
		sql += " for update"
	}
	exec(sql)
	set := "archived_at = null"
	if archived {
		set = "archived_at = now()"
	}
	exec(`update tasks set ` + set + ` where workspace_id = $1`)
	exec(fmt.Sprintf("delete from %[1]s where workspace_id = $1 and %[1]s.id = $2%%", "notes"))
	exec("not sql at all")
}

func exec(string, ...any) {}
