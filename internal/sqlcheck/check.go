// Package sqlcheck checks statement text against the rules that let pmapi's SQL
// run on Citus, where every tenant table is distributed by workspace_id
// (docs/decisions/tenancy-and-citus.md). It is a light tokenizer that
// understands parentheses, subqueries, CASE ... END and function calls; not a
// full SQL parser, so it checks the shapes pmapi writes and says so when a
// statement is beyond it.
package sqlcheck

import (
	"fmt"
	"strings"
)

// Rule names, as violations carry them.
const (
	// RuleTenantKey: every query level that reads or writes a tenant table
	// restricts it with workspace_id = $n, directly or through a join on
	// workspace_id to a table that is. A correlated m.workspace_id =
	// p.workspace_id does not count: Citus then plans the subquery across every
	// shard, and refuses FOR UPDATE.
	RuleTenantKey = "tenant-key"
	// RuleInsertValues: an INSERT into a tenant table takes plain VALUES.
	// INSERT ... SELECT (unnest included) is shipped by Citus with COPY, which
	// PostgreSQL refuses under row-level security.
	RuleInsertValues = "insert-values"
	// RuleModifyOneTable: an UPDATE or DELETE of a tenant table reads no other
	// relation (no FROM, USING or subquery). Citus cannot prune such a statement
	// once its prepared plan goes generic (the sixth execution) and runs it on
	// every shard.
	RuleModifyOneTable = "modify-one-table"
	// RuleMutableInCase: no now() or other non-immutable function inside CASE or
	// COALESCE of an UPDATE (Citus: "non-IMMUTABLE functions are not allowed in
	// CASE or COALESCE statements").
	RuleMutableInCase = "mutable-in-case"
	// RuleStableWithColumn: in an UPDATE or DELETE, no STABLE function applied
	// to a column (Citus: "STABLE functions used in UPDATE queries cannot be
	// called with column references"). Found by shape: now() in a function call
	// with a column, least/greatest(col, now()) with arithmetic after it, a
	// column plus or minus an interval.
	RuleStableWithColumn = "stable-with-column"
	// RuleSetConfig: set_config changes nothing on Citus workers; only the
	// tenant package's own setting may use it (in its SetConfig mode).
	RuleSetConfig = "set-config"
	// RuleParse: the statement is beyond the tokenizer.
	RuleParse = "parse"
)

// Violation is one broken rule.
type Violation struct {
	Rule string
	Msg  string
}

func (v Violation) String() string { return v.Rule + ": " + v.Msg }

// Checker knows which tables are distributed by workspace_id.
type Checker struct {
	Tenant map[string]bool
}

// Check returns every rule sql breaks. Statements that are not DML (SET, DDL)
// break none.
func (c Checker) Check(sql string) []Violation {
	seq, err := parse(sql)
	if err != nil {
		return []Violation{{RuleParse, err.Error()}}
	}
	st := &state{c: c, ctes: map[string]bool{}}
	collectCTEs(seq, st.ctes)
	for _, stmt := range splitOn(seq, func(n *node) bool { return n.op(";") }) {
		if len(stmt) == 0 {
			continue
		}
		st.statement(stmt)
	}
	checkSetConfig(seq, st)
	return st.out
}

type state struct {
	c    Checker
	ctes map[string]bool
	out  []Violation
}

func (st *state) add(rule, format string, args ...any) {
	st.out = append(st.out, Violation{rule, fmt.Sprintf(format, args...)})
}

func (st *state) tenant(name string) bool { return st.c.Tenant[name] && !st.ctes[name] }

// statement checks one top-level statement or subquery.
func (st *state) statement(seq []*node) {
	if len(seq) == 0 {
		return
	}
	if seq[0].is("with") {
		seq = st.skipWith(seq)
	}
	if len(seq) == 0 {
		return
	}
	switch {
	case seq[0].is("select", "values"):
		for _, part := range splitOn(seq, func(n *node) bool { return n.is("union", "intersect", "except") }) {
			st.selectLevel(part)
		}
	case seq[0].is("update"):
		st.modify(updateStmt, seq)
	case seq[0].is("delete"):
		st.modify(deleteStmt, seq)
	case seq[0].is("insert"):
		st.insert(seq)
	default:
		// Not DML (SET, DDL, BEGIN): subqueries inside are still checked.
		st.subqueries(seq)
	}
}

// skipWith checks the CTE bodies of a WITH and returns the statement after it.
func (st *state) skipWith(seq []*node) []*node {
	i := 1
	if i < len(seq) && seq[i].is("recursive") {
		i++
	}
	for i < len(seq) {
		// name [(columns)] as [not] [materialized] (body)
		i++
		if i < len(seq) && seq[i].paren {
			i++
		}
		for i < len(seq) && seq[i].is("as", "not", "materialized") {
			i++
		}
		if i < len(seq) && seq[i].paren {
			st.statement(seq[i].group)
			i++
		}
		if i < len(seq) && seq[i].op(",") {
			i++
			continue
		}
		break
	}
	return seq[i:]
}

func collectCTEs(seq []*node, into map[string]bool) {
	for i, n := range seq {
		if n.paren {
			collectCTEs(n.group, into)
			continue
		}
		// with [recursive] name [(cols)] as (, and every ", name as (" after it.
		if (n.is("with") || n.op(",")) && i+1 < len(seq) {
			j := i + 1
			if seq[j].is("recursive") {
				j++
			}
			if j < len(seq) && seq[j].tok.kind == kIdent && !seq[j].paren {
				k := j + 1
				if k < len(seq) && seq[k].paren && !seq[k].query() {
					k++
				}
				if k+1 < len(seq) && seq[k].is("as") && (seq[k+1].paren || seq[k+1].is("not", "materialized")) {
					into[seq[j].tok.text] = true
				}
			}
		}
	}
}

// subqueries checks every subquery nested anywhere in seq.
func (st *state) subqueries(seq []*node) {
	for _, n := range seq {
		if !n.paren {
			continue
		}
		if n.query() {
			st.statement(n.group)
		} else {
			st.subqueries(n.group)
		}
	}
}

// ref is one relation a query level reads or writes.
type ref struct {
	table string // a table's name, without schema; "" for anything else
	alias string // what columns are qualified with
	fn    string // a set-returning function's name
	hole  bool
}

// level is one query level: its relations and the conditions that join and
// restrict them.
type level struct {
	refs    []ref
	conds   [][]*node // WHERE and ON clauses
	unknown bool      // a hole where relations or conditions are
}

var selectClauses = map[string]bool{"from": true, "where": true, "group": true, "having": true, "window": true,
	"order": true, "limit": true, "offset": true, "fetch": true, "for": true}

func (st *state) selectLevel(seq []*node) {
	lv := &level{}
	for _, cl := range clauses(seq, selectClauses) {
		switch cl.word {
		case "from":
			st.fromItems(cl.body, lv)
		case "where":
			lv.addCond(cl.body)
		}
	}
	st.checkLevel(lv)
	st.subqueries(seq)
}

// A modification is an UPDATE or a DELETE: a target, other relations joined
// by a clause (FROM, USING) and conditions. Citus prunes it with a generic
// plan only when it names the target alone.
type modification struct {
	verb, join string // the keywords of the target's and the joined relations' clauses
	clauses    map[string]bool
	// also is the check of the verb's own (mutables, stableWithColumn).
	also func(st *state, seq []*node)
}

var (
	updateStmt = modification{verb: "update", join: "from",
		clauses: map[string]bool{"set": true, "from": true, "where": true, "returning": true},
		also:    func(st *state, seq []*node) { st.mutables("UPDATE", seq) }}
	deleteStmt = modification{verb: "delete", join: "using",
		clauses: map[string]bool{"using": true, "where": true, "returning": true},
		also:    func(st *state, seq []*node) { st.stableWithColumn("DELETE", seq) }}
)

func (st *state) modify(m modification, seq []*node) {
	lv := &level{}
	target := ""
	var joined []*node
	for _, cl := range clauses(seq, m.clauses) {
		switch cl.word {
		case m.verb:
			body := cl.body
			if len(body) > 0 && body[0].is("from") { // DELETE FROM t
				body = body[1:]
			}
			target = st.target(body, lv)
		case m.join:
			joined = cl.body
			st.fromItems(cl.body, lv)
		case "where":
			lv.addCond(cl.body)
		}
	}
	verb := strings.ToUpper(m.verb)
	if st.tenant(target) {
		if joined != nil {
			st.add(
				RuleModifyOneTable,
				"%s %s ... %s %s: Citus cannot prune a multi-relation %s with a generic plan; match rows with = any($n) instead",
				verb,
				target,
				strings.ToUpper(m.join),
				clip(text(joined)),
				verb,
			)
		} else if hasSubquery(seq) {
			st.add(
				RuleModifyOneTable,
				"%s %s with a subquery: Citus cannot prune it with a generic plan; read first, then %s by key",
				verb,
				target,
				m.verb,
			)
		}
	}
	m.also(st, seq)
	st.checkLevel(lv)
	st.subqueries(seq)
}

// insert checks INSERT INTO t [as a] [(columns)] source [on conflict ...] [returning ...].
func (st *state) insert(seq []*node) {
	i := 1
	if i < len(seq) && seq[i].is("into") {
		i++
	}
	if i >= len(seq) {
		return
	}
	target := ""
	if !seq[i].hole() {
		target = lastName(seq, &i)
	} else {
		i++
	}
	if i < len(seq) && seq[i].is("as") {
		i += 2
	}
	if i < len(seq) && seq[i].paren && !seq[i].query() {
		i++
	}
	rest := seq[i:]
	end := len(rest)
	for j, n := range rest {
		if n.is("on", "returning") {
			end = j
			break
		}
	}
	source, tail := rest[:end], rest[end:]
	if st.tenant(target) {
		switch {
		case len(source) > 0 && source[0].is("values"):
			if hasSubquery(source) {
				st.add(RuleInsertValues, "INSERT INTO %s VALUES with a subquery: Citus refuses subqueries in INSERT", target)
			}
		case len(source) > 0 && source[0].is("default"):
		default:
			st.add(
				RuleInsertValues,
				"INSERT INTO %s %s: Citus ships INSERT ... SELECT with COPY, which row-level security refuses; "+
					"use multi-row VALUES",
				target,
				clip(text(source)),
			)
		}
	}
	if len(source) > 0 && (source[0].is("select", "with") || source[0].query()) {
		st.statement(source)
	} else {
		st.subqueries(source)
	}
	// ON CONFLICT ... DO UPDATE SET is an UPDATE for Citus.
	st.mutables("INSERT ... ON CONFLICT DO UPDATE", tail)
	st.subqueries(tail)
}

// target reads the table an UPDATE or DELETE names, with its alias, into lv.
func (st *state) target(seq []*node, lv *level) string {
	i := 0
	if i < len(seq) && seq[i].is("only") {
		i++
	}
	if i >= len(seq) || seq[i].hole() || seq[i].paren {
		lv.unknown = true
		return ""
	}
	name := lastName(seq, &i)
	r := ref{table: name, alias: name}
	if a, ok := alias(seq, &i); ok {
		r.alias = a
	}
	lv.refs = append(lv.refs, r)
	return name
}

// lastName reads name or schema.name at seq[*i] and returns the table name.
func lastName(seq []*node, i *int) string {
	name := seq[*i].tok.text
	*i++
	for *i+1 < len(seq) && seq[*i].op(".") {
		name = seq[*i+1].tok.text
		*i += 2
	}
	return name
}

// notAlias are the words that may follow a relation and are not its alias.
var notAlias = map[string]bool{
	"where": true, "join": true, "left": true, "right": true, "full": true, "inner": true, "cross": true, "natural": true,
	"outer": true, "on": true, "using": true, "set": true, "group": true, "order": true, "limit": true, "offset": true,
	"having": true, "window": true, "returning": true, "for": true, "union": true, "intersect": true, "except": true,
	"fetch": true, "with": true, "values": true, "select": true, "from": true, "lateral": true, "tablesample": true,
}

// alias reads an optional [as] alias [(columns)] at seq[*i].
func alias(seq []*node, i *int) (string, bool) {
	j := *i
	if j < len(seq) && seq[j].is("as") {
		j++
	}
	if j < len(seq) && !seq[j].paren &&
		(seq[j].tok.kind == kIdent && !notAlias[seq[j].tok.text] || seq[j].tok.kind == kQuoted) {
		a := seq[j].tok.text
		j++
		if j < len(seq) && seq[j].paren && !seq[j].query() {
			j++
		}
		*i = j
		return a, true
	}
	return "", false
}

// fromItems reads a FROM (or USING) list: items separated by commas and joins,
// with their ON conditions.
func (st *state) fromItems(seq []*node, lv *level) {
	i := 0
	for i < len(seq) {
		n := seq[i]
		switch {
		case n.op(","), n.is("natural", "left", "right", "full", "inner", "cross", "outer", "join", "lateral", "only"):
			i++
			continue
		case n.is("on"):
			j := i + 1
			for j < len(seq) && !seq[j].op(",") && !seq[j].is("join", "left", "right", "full", "inner", "cross", "natural") {
				j++
			}
			lv.addCond(seq[i+1 : j])
			i = j
			continue
		case n.is("using") && i+1 < len(seq) && seq[i+1].paren:
			i += 2
			continue
		case n.is("with") && i+1 < len(seq) && seq[i+1].is("ordinality"):
			i += 2
			continue
		}
		var r ref
		switch {
		case n.hole():
			r.hole = true
			lv.unknown = true
			i++
		case n.paren:
			// A derived table or VALUES list: checked as its own level.
			i++
		case i+1 < len(seq) && seq[i+1].paren:
			r.fn = n.tok.text
			i += 2
		case n.tok.kind == kIdent || n.tok.kind == kQuoted:
			r.table = lastName(seq, &i)
			r.alias = r.table
		default:
			i++
			continue
		}
		if a, ok := alias(seq, &i); ok {
			r.alias = a
		}
		lv.refs = append(lv.refs, r)
	}
}

func (lv *level) addCond(seq []*node) {
	if hasHole(seq) {
		lv.unknown = true
	}
	lv.conds = append(lv.conds, seq)
}

// hasHole reports a hole in seq or its parentheses, subqueries aside.
func hasHole(seq []*node) bool {
	for _, n := range seq {
		if n.hole() || (n.paren && !n.query() && hasHole(n.group)) {
			return true
		}
	}
	return false
}

// checkLevel applies RuleTenantKey: every tenant table of the level must be
// tied to a workspace_id = $n of the same level.
func (st *state) checkLevel(lv *level) {
	if lv.unknown {
		return
	}
	parent := map[int]int{}
	var find func(int) int
	find = func(x int) int {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		return x
	}
	const pinned = -1
	union := func(a, b int) {
		ra, rb := find(a), find(b)
		if ra == rb {
			return
		}
		if rb == pinned {
			ra, rb = rb, ra
		}
		parent[rb] = ra
	}
	resolve := func(o operand) int {
		if o.qual == "" {
			// Unqualified: the level's only relation, or its only tenant table.
			if len(lv.refs) == 1 {
				return 0
			}
			found := -2
			for i, r := range lv.refs {
				if st.tenant(r.table) {
					if found != -2 {
						return -2
					}
					found = i
				}
			}
			return found
		}
		for i, r := range lv.refs {
			if r.alias == o.qual {
				return i
			}
		}
		return -2 // an outer level's relation: correlation does not route
	}
	for _, cond := range lv.conds {
		for _, eq := range equalities(cond) {
			a, b := eq[0], eq[1]
			if a.param && b.param {
				continue
			}
			if a.param {
				a, b = b, a
			}
			if a.col != "workspace_id" {
				continue
			}
			ra := resolve(a)
			if ra < 0 {
				continue
			}
			if b.param {
				union(ra, pinned)
			} else if b.col == "workspace_id" {
				if rb := resolve(b); rb >= 0 {
					union(ra, rb)
				}
			}
		}
	}
	for i, r := range lv.refs {
		if st.tenant(r.table) && find(i) != find(pinned) {
			name := r.table
			if r.alias != r.table {
				name += " " + r.alias
			}
			st.add(
				RuleTenantKey,
				"%s is not restricted by %s.workspace_id = $n at its own query level "+
					"(a correlated or missing workspace_id makes Citus plan it across every shard)",
				name,
				r.alias,
			)
		}
	}
}

// operand is one side of an equality: a column, a parameter or something else.
type operand struct {
	qual, col string
	param     bool
}

// equalities returns the a = b conjuncts of a condition; nothing when it has a
// top-level OR, since then no single conjunct holds for every row.
func equalities(seq []*node) [][2]operand {
	for _, n := range seq {
		if n.is("or") {
			return nil
		}
	}
	var out [][2]operand
	for _, conj := range splitOn(seq, func(n *node) bool { return n.is("and") }) {
		if len(conj) == 1 && conj[0].paren && !conj[0].query() {
			out = append(out, equalities(conj[0].group)...)
			continue
		}
		for i, n := range conj {
			if !n.op("=") {
				continue
			}
			l, lok := readOperand(conj[:i])
			r, rok := readOperand(conj[i+1:])
			if lok && rok {
				out = append(out, [2]operand{l, r})
			}
		}
	}
	return out
}

// readOperand reads a whole side of an equality: [qual.]column or $n, either
// with casts.
func readOperand(seq []*node) (operand, bool) {
	// Drop trailing casts: x::uuid, x::text[].
	for len(seq) >= 2 && seq[len(seq)-2].op("::") {
		seq = seq[:len(seq)-2]
	}
	for len(seq) >= 3 && seq[len(seq)-1].op("]") && seq[len(seq)-2].op("[") && seq[len(seq)-3].tok.kind == kIdent {
		seq = seq[:len(seq)-2]
		for len(seq) >= 2 && seq[len(seq)-2].op("::") {
			seq = seq[:len(seq)-2]
		}
	}
	switch {
	case len(seq) == 1 && !seq[0].paren && seq[0].tok.kind == kParam:
		return operand{param: true}, true
	case len(seq) == 1 && !seq[0].paren && seq[0].tok.kind == kIdent:
		return operand{col: seq[0].tok.text}, true
	case len(seq) == 3 && seq[1].op(".") && !seq[0].paren && !seq[2].paren:
		return operand{qual: seq[0].tok.text, col: seq[2].tok.text}, true
	}
	return operand{}, false
}

// clause is a keyword-led part of a statement.
type clause struct {
	word string
	body []*node
}

// clauses splits a statement at the top-level keywords in words (its first
// word always starts a clause).
func clauses(seq []*node, words map[string]bool) []clause {
	var out []clause
	for i, n := range seq {
		if i == 0 || (!n.paren && n.tok.kind == kIdent && words[n.tok.text]) {
			out = append(out, clause{word: n.tok.text})
			continue
		}
		out[len(out)-1].body = append(out[len(out)-1].body, n)
	}
	return out
}

func splitOn(seq []*node, sep func(*node) bool) [][]*node {
	var out [][]*node
	var cur []*node
	for _, n := range seq {
		if sep(n) {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, n)
	}
	return append(out, cur)
}

func hasSubquery(seq []*node) bool {
	for _, n := range seq {
		if n.paren && (n.query() || hasSubquery(n.group)) {
			return true
		}
	}
	return false
}

// nonImmutable are functions whose result is not fixed by their arguments.
var nonImmutable = map[string]bool{
	"now": true, "clock_timestamp": true, "statement_timestamp": true, "transaction_timestamp": true, "timeofday": true,
	"random": true, "gen_random_uuid": true, "uuid_generate_v4": true, "nextval": true, "currval": true, "lastval": true,
	"setval": true, "current_setting": true, "txid_current": true, "pg_backend_pid": true,
}

// sqlValueFunctions are the parameterless ones written without parentheses.
var sqlValueFunctions = map[string]bool{
	"current_timestamp": true, "current_date": true, "current_time": true, "localtime": true, "localtimestamp": true,
}

// mutableCall finds a non-immutable function call in seq, at any depth but
// not inside subqueries.
func mutableCall(seq []*node) string {
	for i, n := range seq {
		if n.paren {
			if n.query() {
				continue
			}
			if f := mutableCall(n.group); f != "" {
				return f
			}
			continue
		}
		if n.tok.kind != kIdent || (i > 0 && seq[i-1].op(".", "::")) {
			continue
		}
		if nonImmutable[n.tok.text] && i+1 < len(seq) && seq[i+1].paren {
			return n.tok.text + "()"
		}
		if sqlValueFunctions[n.tok.text] {
			return n.tok.text
		}
	}
	return ""
}

// mutables applies RuleMutableInCase and RuleStableWithColumn to the
// modifying part of a statement.
func (st *state) mutables(what string, seq []*node) {
	st.mutableInCase(what, seq)
	st.stableWithColumn(what, seq)
}

func (st *state) mutableInCase(what string, seq []*node) {
	depth, start := 0, 0
	for i, n := range seq {
		switch {
		case n.is("case"):
			if depth == 0 {
				start = i
			}
			depth++
		case n.is("end") && depth > 0:
			depth--
			if depth == 0 {
				if f := mutableCall(seq[start : i+1]); f != "" {
					st.add(
						RuleMutableInCase,
						"%s uses %s inside CASE: decide in Go and choose between statements, or pass the time as a parameter",
						what,
						f,
					)
				}
			}
		case n.is("coalesce") && i+1 < len(seq) && seq[i+1].paren:
			if f := mutableCall(seq[i+1].group); f != "" && depth == 0 {
				st.add(
					RuleMutableInCase,
					"%s uses %s inside COALESCE: decide in Go and choose between statements, or pass the time as a parameter",
					what,
					f,
				)
			}
		case n.paren && !n.query() && depth == 0:
			st.mutableInCase(what, n.group)
		}
	}
}

// stableWithColumn looks for the shapes of a STABLE function applied to a
// column: now() beside a column in a function's arguments, least/greatest of a
// column and now() in arithmetic, a column plus or minus an interval.
func (st *state) stableWithColumn(what string, seq []*node) {
	for i, n := range seq {
		if !n.paren || n.query() {
			continue
		}
		if i > 0 && seq[i-1].tok.kind == kIdent && !seq[i-1].paren {
			fn := seq[i-1].tok.text
			if f := mutableCall(n.group); f != "" && hasColumn(n.group) {
				switch {
				case fn == "least" || fn == "greatest":
					if i+1 < len(seq) && seq[i+1].op("+", "-") {
						st.add(
							RuleStableWithColumn,
							"%s computes %s(column, %s) %s ...: a STABLE operator over a column; "+
								"decide in Go or pass the time as a parameter",
							what,
							fn,
							f,
							seq[i+1].tok.text,
						)
					}
				case fn == "coalesce" || notColumn[fn] || (i >= 2 && seq[i-2].op("::")):
				default:
					st.add(RuleStableWithColumn, "%s calls %s(...) with a column and %s: STABLE with a column reference", what, fn, f)
				}
			}
		}
		st.stableWithColumn(what, n.group)
	}
	for i, n := range seq {
		if !n.op("+", "-") || i == 0 || i+1 >= len(seq) {
			continue
		}
		right := seq[i+1]
		isInterval := right.is("interval") || (right.is("make_interval") && i+2 < len(seq) && seq[i+2].paren)
		left := seq[i-1]
		leftColumn := !left.paren && left.tok.kind == kIdent && !notColumn[left.tok.text] &&
			!sqlValueFunctions[left.tok.text] &&
			!(i >= 2 && seq[i-2].op("::"))
		if isInterval && leftColumn {
			st.add(
				RuleStableWithColumn,
				"%s adds an interval to the column %s: timestamptz arithmetic is STABLE; "+
					"compute the value in Go or from now() alone",
				what,
				left.tok.text,
			)
		}
	}
}

// notColumn are words that look like identifiers but are not column references.
var notColumn = map[string]bool{
	"and": true, "or": true, "not": true, "null": true, "true": true, "false": true, "is": true, "in": true, "as": true,
	"interval": true, "case": true, "when": true, "then": true, "else": true, "end": true, "distinct": true, "from": true,
	"any": true, "all": true, "some": true, "exists": true, "between": true, "like": true, "ilike": true, "similar": true,
	"at": true, "time": true, "zone": true, "array": true, "row": true, "epoch": true, "where": true, "on": true,
	"set": true, "values": true, "select": true, "returning": true, "by": true, "having": true, "using": true,
}

// hasColumn reports whether seq (not its subqueries) refers to a column.
func hasColumn(seq []*node) bool {
	for i, n := range seq {
		if n.paren {
			if !n.query() && hasColumn(n.group) {
				return true
			}
			continue
		}
		if n.tok.kind != kIdent && n.tok.kind != kQuoted {
			continue
		}
		if notColumn[n.tok.text] || sqlValueFunctions[n.tok.text] {
			continue
		}
		if i > 0 && seq[i-1].op("::") {
			continue // a type
		}
		if i+1 < len(seq) && seq[i+1].paren {
			continue // a function
		}
		if i+1 < len(seq) && seq[i+1].op("=>") {
			continue // a named argument
		}
		return true
	}
	return false
}

// checkSetConfig applies RuleSetConfig.
func checkSetConfig(seq []*node, st *state) {
	for i, n := range seq {
		if n.paren {
			checkSetConfig(n.group, st)
			continue
		}
		if n.is("set_config") && i+1 < len(seq) && seq[i+1].paren {
			args := seq[i+1].group
			if len(args) > 0 && args[0].tok.kind == kString && args[0].tok.text == "'pmapi.workspace_id'" {
				continue
			}
			st.add(
				RuleSetConfig,
				"set_config(%s) does not reach Citus workers: use tenant's Shard.QueueLocalSetting",
				clip(text(args)),
			)
		}
	}
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
