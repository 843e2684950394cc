package sqlcheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A Statement is SQL text found in the module's Go source: a string
// expression folded from literals and constants, with Hole where a part is
// only known at run time. An expression that can take several values (a
// variable assigned different constants) gives one Statement each.
type Statement struct {
	Pos string // file:line, relative to the module root
	SQL string
}

// maxAlternatives bounds the values one expression may fold to.
const maxAlternatives = 64

// sqlStart recognises a statement by its first word, in lower or upper case:
// "Delete an app" is an operation's summary, not SQL.
var sqlStart = regexp.MustCompile(`^\s*(select|insert|update|delete|with|SELECT|INSERT|UPDATE|DELETE|WITH)\s`)

// Statements returns every SQL statement in the non-test Go files under root,
// the module root.
func Statements(root string) ([]Statement, error) {
	modPath, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{} // by directory
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			// This package's own messages quote SQL.
			if path != root &&
				(strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || name == "node_modules" ||
					name == "bin" || path == filepath.Join(root, "internal", "sqlcheck")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			p = &pkg{consts: map[string]ast.Expr{}}
			pkgs[dir] = p
		}
		p.files = append(p.files, f)
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if len(vs.Values) != len(vs.Names) {
					continue
				}
				for i, n := range vs.Names {
					// Package variables count only when nothing assigns them
					// later; a const always does.
					if g.Tok == token.CONST || isStringLit(vs.Values[i]) {
						p.consts[n.Name] = vs.Values[i]
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	byImport := map[string]*pkg{}
	for dir, p := range pkgs {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return nil, err
		}
		byImport[strings.TrimSuffix(modPath+"/"+filepath.ToSlash(rel), "/.")] = p
	}
	e := &evaluator{byImport: byImport}
	var out []Statement
	dirs := make([]string, 0, len(pkgs))
	for dir := range pkgs {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		p := pkgs[dir]
		for _, f := range p.files {
			imports := fileImports(f)
			record := func(at token.Pos, vals []string) {
				pos := fset.Position(at)
				rel, _ := filepath.Rel(root, pos.Filename)
				for _, v := range vals {
					if sqlStart.MatchString(v) {
						out = append(out, Statement{Pos: fmt.Sprintf("%s:%d", filepath.ToSlash(rel), pos.Line), SQL: v})
					}
				}
			}
			var walk func(n ast.Node, fn *ast.BlockStmt) bool
			visit := func(fn *ast.BlockStmt) func(ast.Node) bool {
				return func(n ast.Node) bool { return walk(n, fn) }
			}
			walk = func(n ast.Node, fn *ast.BlockStmt) bool {
				switch x := n.(type) {
				case *ast.FuncDecl:
					if x.Body != nil {
						ast.Inspect(x.Body, visit(x.Body))
					}
					return false
				case *ast.AssignStmt:
					// sql += " for update": the variable's every value, with
					// and without what is added.
					if id, ok := x.Lhs[0].(*ast.Ident); ok && x.Tok == token.ADD_ASSIGN && fn != nil {
						vals, _ := e.local(p, imports, fn, id.Name, 0)
						record(x.Pos(), vals)
					}
				case *ast.BasicLit, *ast.BinaryExpr, *ast.CallExpr:
					expr := x.(ast.Expr)
					if !e.stringy(p, imports, expr) {
						return true
					}
					record(expr.Pos(), e.eval(p, imports, fn, expr, 0))
					return false
				}
				return true
			}
			ast.Inspect(f, visit(nil))
		}
	}
	return out, nil
}

type pkg struct {
	files  []*ast.File
	consts map[string]ast.Expr
}

type evaluator struct {
	byImport map[string]*pkg
	funcs    map[*ast.BlockStmt]map[string]*assigned
}

func modulePath(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.TrimSpace(rest), nil
		}
	}
	return "", fmt.Errorf("no module line in %s/go.mod", root)
}

// fileImports maps a file's import names to paths.
func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

func isStringLit(x ast.Expr) bool {
	b, ok := x.(*ast.BasicLit)
	return ok && b.Kind == token.STRING
}

func (e *evaluator) isSprintf(imports map[string]string, c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && imports[id.Name] == "fmt" && sel.Sel.Name == "Sprintf"
}

// stringy reports whether x is a string expression worth folding: a string
// literal, a concatenation with one, or a Sprintf.
func (e *evaluator) stringy(p *pkg, imports map[string]string, x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING
	case *ast.BinaryExpr:
		return x.Op == token.ADD && (e.stringy(p, imports, x.X) || e.stringy(p, imports, x.Y))
	case *ast.CallExpr:
		return e.isSprintf(imports, x)
	case *ast.ParenExpr:
		return e.stringy(p, imports, x.X)
	}
	return false
}

// eval folds x to its possible values; Hole stands for what it cannot know.
func (e *evaluator) eval(p *pkg, imports map[string]string, fn *ast.BlockStmt, x ast.Expr, depth int) []string {
	if depth > 8 {
		return []string{Hole}
	}
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			if err == nil {
				return []string{s}
			}
		}
		if x.Kind == token.INT {
			return []string{x.Value}
		}
	case *ast.ParenExpr:
		return e.eval(p, imports, fn, x.X, depth+1)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			break
		}
		return product(e.eval(p, imports, fn, x.X, depth+1), e.eval(p, imports, fn, x.Y, depth+1))
	case *ast.Ident:
		if fn != nil {
			if vals, ok := e.local(p, imports, fn, x.Name, depth); ok {
				return vals
			}
		}
		if c, ok := p.consts[x.Name]; ok {
			return e.eval(p, imports, nil, c, depth+1)
		}
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			if other := e.byImport[imports[id.Name]]; other != nil {
				if c, ok := other.consts[x.Sel.Name]; ok {
					// The constant's own file's imports are not at hand; module
					// constants built from other packages' constants are rare
					// enough to show as holes.
					return e.eval(other, map[string]string{}, nil, c, depth+1)
				}
			}
		}
	case *ast.CallExpr:
		if e.isSprintf(imports, x) && len(x.Args) > 0 {
			formats := e.eval(p, imports, fn, x.Args[0], depth+1)
			args := make([][]string, len(x.Args)-1)
			for i, a := range x.Args[1:] {
				args[i] = e.eval(p, imports, fn, a, depth+1)
			}
			var out []string
			for _, f := range formats {
				for _, combo := range combos(args) {
					out = append(out, sprintf(f, combo))
					if len(out) > maxAlternatives {
						return []string{Hole}
					}
				}
			}
			return out
		}
	}
	return []string{Hole}
}

// local folds a variable or constant of the enclosing function: the values of
// every assignment to it, each optionally followed by what += adds.
func (e *evaluator) local(
	p *pkg,
	imports map[string]string,
	fn *ast.BlockStmt,
	name string,
	depth int,
) ([]string, bool) {
	a := e.assignments(fn)[name]
	if a == nil {
		return nil, false
	}
	var out []string
	for _, d := range a.defs {
		if d == nil {
			out = append(out, Hole)
			continue
		}
		out = append(out, e.eval(p, imports, fn, d, depth+1)...)
	}
	base := out
	for _, add := range a.adds {
		for _, b := range base {
			for _, v := range e.eval(p, imports, fn, add, depth+1) {
				out = append(out, b+v)
			}
		}
	}
	if len(out) == 0 || len(out) > maxAlternatives {
		return []string{Hole}, true
	}
	return out, true
}

// assigned is what a function assigns to one name: whole values (nil when not
// one expression) and += additions.
type assigned struct {
	defs, adds []ast.Expr
}

func (e *evaluator) assignments(fn *ast.BlockStmt) map[string]*assigned {
	if m, ok := e.funcs[fn]; ok {
		return m
	}
	m := map[string]*assigned{}
	get := func(name string) *assigned {
		if m[name] == nil {
			m[name] = &assigned{}
		}
		return m[name]
	}
	ast.Inspect(fn, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for i, l := range s.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				a := get(id.Name)
				switch {
				case len(s.Rhs) != len(s.Lhs):
					a.defs = append(a.defs, nil)
				case s.Tok == token.ADD_ASSIGN:
					a.adds = append(a.adds, s.Rhs[i])
				default:
					a.defs = append(a.defs, s.Rhs[i])
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				a := get(id.Name)
				if i < len(s.Values) {
					a.defs = append(a.defs, s.Values[i])
				}
			}
		}
		return true
	})
	if e.funcs == nil {
		e.funcs = map[*ast.BlockStmt]map[string]*assigned{}
	}
	e.funcs[fn] = m
	return m
}

func product(a, b []string) []string {
	if len(a)*len(b) > maxAlternatives {
		return []string{Hole}
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

func combos(args [][]string) [][]string {
	out := [][]string{nil}
	for _, vals := range args {
		var next [][]string
		for _, c := range out {
			for _, v := range vals {
				next = append(next, append(append([]string(nil), c...), v))
			}
		}
		out = next
		if len(out) > maxAlternatives {
			return [][]string{hole(len(args))}
		}
	}
	return out
}

func hole(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = Hole
	}
	return out
}

var verb = regexp.MustCompile(`%(\[(\d+)\])?[-+# 0]*\d*(\.\d+)?([a-zA-Z%])`)

// sprintf applies a format to folded arguments: every verb prints its
// argument's text.
func sprintf(format string, args []string) string {
	next := 0
	return verb.ReplaceAllStringFunc(format, func(m string) string {
		sub := verb.FindStringSubmatch(m)
		if sub[4] == "%" {
			return "%"
		}
		i := next
		if sub[2] != "" {
			n, _ := strconv.Atoi(sub[2])
			i = n - 1
		}
		next = i + 1
		if i < 0 || i >= len(args) {
			return Hole
		}
		if sub[4] == "q" {
			return strconv.Quote(args[i])
		}
		return args[i]
	})
}
