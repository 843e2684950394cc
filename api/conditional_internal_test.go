package api

import "testing"

func TestParseTags(t *testing.T) {
	tag := ETag([]byte(`{"success":true,"data":{}}`))
	for _, tc := range []struct {
		header      string
		weak, match bool // weakMatch (If-None-Match) and strongMatch (If-Match) of tag
	}{
		{tag, true, true},
		{"W/" + tag, true, false},
		{`"x", ` + tag, true, true},
		{` "x" ,W/"y",` + tag + ` `, true, true},
		{"*", true, true},
		{`"x"`, false, false},
		{`W/"x"`, false, false},
		{`"x",,` + tag + `,`, true, true},
	} {
		e, err := parseTags("If-None-Match", tc.header)
		if err != nil {
			t.Fatalf("%s: %v", tc.header, err)
		}
		if e.weakMatch(tag) != tc.weak || e.strongMatch(tag) != tc.match {
			t.Errorf("%s: weak %v strong %v, want %v %v", tc.header, e.weakMatch(tag), e.strongMatch(tag),
				tc.weak, tc.match)
		}
	}
	for _, bad := range []string{"x", `"x`, `"x" "y"`, `W/x`, `"x",,y`, `"a b"`, `**`, ",", `"x"*`} {
		if _, err := parseTags("If-Match", bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
