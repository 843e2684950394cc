package sqlcheck

import (
	"reflect"
	"testing"
)

// TestLexQuotes: a doubled quote stays inside a string or a quoted identifier,
// a backslash escapes only in an E'...' string, and an unclosed one is an error.
func TestLexQuotes(t *testing.T) {
	got, err := lex(`"a""b" 'it''s' E'x\'y' 'c\' "d"`)
	if err != nil {
		t.Fatal(err)
	}
	want := []lexeme{{kQuoted, `a"b`}, {kString, `'it''s'`}, {kString, `'x\'y'`}, {kString, `'c\'`}, {kQuoted, "d"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lexed %v, want %v", got, want)
	}
	for _, sql := range []string{`select 'open`, `select "open`, `select E'open\'`, `select E'x\`} {
		if _, err := lex(sql); err == nil {
			t.Errorf("%s: no error for the unclosed quote", sql)
		}
	}
}
