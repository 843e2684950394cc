package sqlcheck

import (
	"fmt"
	"strings"
)

// Hole stands for a part of a statement that is only known at run time (a
// sanitized identifier, a joined list of conditions). Checks that would need
// to see through it give up on the query level that holds it instead of
// guessing.
const Hole = "\uE000"

type kind int

const (
	kIdent  kind = iota // unquoted identifiers and keywords, lower-cased
	kQuoted             // "quoted" identifiers, as written
	kString             // string literals, any quoting
	kNumber
	kParam // $1, $2, ...
	kOp    // operators and punctuation: = <> :: . , ; + - => ...
	kHole
)

type lexeme struct {
	kind kind
	text string
}

// node is a token, or a parenthesised group of nodes.
type node struct {
	tok   lexeme
	group []*node
	paren bool
}

// is reports whether n is one of the keywords or unquoted identifiers words.
func (n *node) is(words ...string) bool { return n.token(kIdent, words) }

// op reports whether n is one of the operators ops.
func (n *node) op(ops ...string) bool { return n.token(kOp, ops) }

func (n *node) token(k kind, texts []string) bool {
	if n == nil || n.paren || n.tok.kind != k {
		return false
	}
	for _, t := range texts {
		if n.tok.text == t {
			return true
		}
	}
	return false
}

func (n *node) hole() bool { return n != nil && !n.paren && n.tok.kind == kHole }

// query reports whether a group is a subquery: (select ...), (with ...).
func (n *node) query() bool {
	return n != nil && n.paren && len(n.group) > 0 && n.group[0].is("select", "with")
}

func (n *node) String() string {
	if n.paren {
		return "(" + text(n.group) + ")"
	}
	return n.tok.text
}

// text renders nodes back as SQL, spaced as people write it.
func text(seq []*node) string {
	var b strings.Builder
	for i, n := range seq {
		tight := i == 0 || n.op(".", "::", ",", "[", "]") || seq[i-1].op(".", "::", "[") ||
			(n.paren && !seq[i-1].paren && seq[i-1].tok.kind == kIdent && !notColumn[seq[i-1].tok.text])
		if !tight {
			b.WriteByte(' ')
		}
		b.WriteString(n.String())
	}
	return b.String()
}

// closing returns the index of the quote q that closes the text quoted at i: a
// doubled q stands for one inside, and with backslash a backslash escapes the
// next byte (E'...'). Unclosed, it is len(sql) or more.
func closing(sql string, i int, q byte, backslash bool) int {
	j := i + 1
	for ; j < len(sql); j++ {
		if backslash && sql[j] == '\\' {
			j++
			continue
		}
		if sql[j] == q {
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			break
		}
	}
	return j
}

// lex splits SQL into tokens. It knows PostgreSQL's comments, quoting (with
// escape strings and dollar quotes) and parameters; everything else that is not a
// word or a number is an operator made of operator characters.
func lex(sql string) ([]lexeme, error) {
	var out []lexeme
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case strings.HasPrefix(sql[i:], Hole):
			out = append(out, lexeme{kHole, Hole})
			i += len(Hole)
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment")
			}
			i += end + 4
		case c == '\'' || ((c == 'e' || c == 'E') && i+1 < len(sql) && sql[i+1] == '\''):
			backslash := c != '\''
			if backslash {
				i++
			}
			j := closing(sql, i, '\'', backslash)
			if j >= len(sql) {
				return nil, fmt.Errorf("unterminated string")
			}
			out = append(out, lexeme{kString, sql[i : j+1]})
			i = j + 1
		case c == '"':
			j := closing(sql, i, '"', false)
			if j >= len(sql) {
				return nil, fmt.Errorf("unterminated quoted identifier")
			}
			out = append(out, lexeme{kQuoted, strings.ReplaceAll(sql[i+1:j], `""`, `"`)})
			i = j + 1
		case c == '$' && strings.HasPrefix(sql[i+1:], Hole):
			// $%d with an unknown number.
			out = append(out, lexeme{kParam, "$?"})
			i += 1 + len(Hole)
		case c == '$' && i+1 < len(sql) && isDigit(sql[i+1]):
			j := i + 1
			for j < len(sql) && isDigit(sql[j]) {
				j++
			}
			out = append(out, lexeme{kParam, sql[i:j]})
			i = j
		case c == '$':
			// A dollar quote: $$...$$ or $tag$...$tag$.
			j := i + 1
			for j < len(sql) && isWord(sql[j]) {
				j++
			}
			if j >= len(sql) || sql[j] != '$' {
				return nil, fmt.Errorf("stray $")
			}
			tag := sql[i : j+1]
			end := strings.Index(sql[j+1:], tag)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %s quote", tag)
			}
			out = append(out, lexeme{kString, sql[i : j+1+end+len(tag)]})
			i = j + 1 + end + len(tag)
		case isWordStart(c):
			j := i
			for j < len(sql) && (isWord(sql[j]) || sql[j] == '$') {
				j++
			}
			out = append(out, lexeme{kIdent, strings.ToLower(sql[i:j])})
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(sql) && isDigit(sql[i+1])):
			j := i
			for j < len(sql) && (isDigit(sql[j]) || sql[j] == '.' || sql[j] == 'e' || sql[j] == 'E') {
				j++
			}
			out = append(out, lexeme{kNumber, sql[i:j]})
			i = j
		case c == '(' || c == ')' || c == ',' || c == ';' || c == '[' || c == ']':
			out = append(out, lexeme{kOp, string(c)})
			i++
		case c == ':' && strings.HasPrefix(sql[i:], "::"):
			out = append(out, lexeme{kOp, "::"})
			i += 2
		case c == '.':
			out = append(out, lexeme{kOp, "."})
			i++
		case strings.ContainsRune("+-*/<>=~!@#%^&|`?:", rune(c)):
			j := i
			for j < len(sql) && strings.ContainsRune("+-*/<>=~!@#%^&|`?:", rune(sql[j])) {
				// A comment starts a new token even without a space.
				if j > i && (strings.HasPrefix(sql[j:], "--") || strings.HasPrefix(sql[j:], "/*")) {
					break
				}
				j++
			}
			out = append(out, lexeme{kOp, sql[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %q", c)
		}
	}
	return out, nil
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isWordStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80 }
func isWord(c byte) bool      { return isWordStart(c) || isDigit(c) }

// parse lexes sql and nests its parentheses.
func parse(sql string) ([]*node, error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, err
	}
	stack := [][]*node{nil}
	for _, t := range toks {
		switch {
		case t.kind == kOp && t.text == "(":
			stack = append(stack, nil)
		case t.kind == kOp && t.text == ")":
			if len(stack) == 1 {
				return nil, fmt.Errorf("unbalanced )")
			}
			g := &node{group: stack[len(stack)-1], paren: true}
			stack = stack[:len(stack)-1]
			stack[len(stack)-1] = append(stack[len(stack)-1], g)
		default:
			stack[len(stack)-1] = append(stack[len(stack)-1], &node{tok: t})
		}
	}
	if len(stack) != 1 {
		return nil, fmt.Errorf("unbalanced (")
	}
	return stack[0], nil
}
