package storekit

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/api"
)

// Where is the WHERE clause of a list query and its arguments. It always
// starts with the workspace, `<alias>.workspace_id = $1`: row-level security
// is the safety net, the explicit predicate is what uses the indexes and what
// lets Citus route the query to one shard (docs/decisions/tenancy-and-citus.md).
type Where struct {
	alias    string
	conds    []string
	args     []any
	byUpdate bool
}

// NewWhere starts the clause of a list over the table aliased alias.
func NewWhere(alias string, ws uuid.UUID) *Where {
	return &Where{alias: alias, conds: []string{alias + ".workspace_id = $1"}, args: []any{ws}}
}

// Add appends cond, each `?` in it taking the next of v as a parameter.
func (w *Where) Add(cond string, v ...any) {
	for _, x := range v {
		w.args = append(w.args, x)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

// Equal filters column on v when v is given (a non-empty string, a non-nil
// id).
func (w *Where) Equal(column string, v any) {
	switch x := v.(type) {
	case string:
		if x != "" {
			w.Add(w.col(column)+" = ?", x)
		}
	case *uuid.UUID:
		if x != nil {
			w.Add(w.col(column)+" = ?", *x)
		}
	default:
		panic("storekit: Equal takes a string or a *uuid.UUID")
	}
}

// Within keeps rows whose column lies in the half-open window [after,
// before): consecutive windows neither overlap nor leave a gap. A nil bound is
// open.
func (w *Where) Within(column string, after, before *time.Time) {
	if after != nil {
		w.Add(w.col(column)+" >= ?", *after)
	}
	if before != nil {
		w.Add(w.col(column)+" < ?", *before)
	}
}

// Contains keeps rows where any of columns holds text as a case-insensitive
// substring; empty text filters nothing.
func (w *Where) Contains(text string, columns ...string) {
	if text == "" {
		return
	}
	parts := make([]string, len(columns))
	args := make([]any, len(columns))
	for i, c := range columns {
		parts[i] = w.col(c) + ` ilike '%' || ? || '%'`
		args[i] = EscapeLike(text)
	}
	cond := strings.Join(parts, " or ")
	if len(parts) > 1 {
		cond = "(" + cond + ")"
	}
	w.Add(cond, args...)
}

// Live leaves out archived rows unless includeArchived.
func (w *Where) Live(includeArchived bool) {
	if !includeArchived {
		w.conds = append(w.conds, w.alias+".archived_at is null")
	}
}

// Before is the keyset of a list newest first: rows whose time-ordered id is
// below the previous page's last.
func (w *Where) Before(before *uuid.UUID) {
	if before != nil {
		w.Add(w.alias+".id < ?", *before)
	}
}

// Page is a list's keyset (api.Keyset): updatedSince, and the page's start
// in its order, newest first below the cursor's id or, in a walk by
// updatedAt, past the cursor's time and id and below the horizon (Horizon),
// which the read fills in before it sends the page.
func (w *Where) Page(k api.Keyset) {
	w.Within("updated_at", k.UpdatedSince, nil)
	if !k.ByUpdate {
		w.Before(k.Before)
		return
	}
	w.byUpdate = true
	if k.After != nil {
		w.Add("("+w.alias+".updated_at, "+w.alias+".id) > (?, ?)", k.After.At, k.After.ID)
	}
	w.Add(w.alias+".updated_at < ?", &Horizon{})
}

// Order is the list's ORDER BY, without the words: the keyset's (Page).
func (w *Where) Order() string {
	if w.byUpdate {
		return w.alias + ".updated_at, " + w.alias + ".id"
	}
	return w.alias + ".id desc"
}

// SQL is the clause, without the word WHERE.
func (w *Where) SQL() string { return strings.Join(w.conds, " and ") }

// Arg adds v as the next parameter and returns its placeholder (a LIMIT).
func (w *Where) Arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// Args are the parameters of the clause (and of Arg's placeholders).
func (w *Where) Args() []any { return w.args }

func (w *Where) col(column string) string {
	if strings.ContainsAny(column, ".( ") {
		return column
	}
	return w.alias + "." + column
}

// EscapeLike makes user text literal inside an ILIKE pattern.
func EscapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Limit is a list statement's LIMIT as a literal rather than a parameter, so
// that the generic plan the list keeps (genericPlans) is costed for the page
// it reads rather than for a tenth of the matching rows. The limit is a
// validated 1 to 201: the text has at most that many forms per filter, each
// prepared once per connection.
func Limit(n int) string { return strconv.Itoa(max(n, 0)) }
