// Package jsonwtest checks a row's hand-written JSON against encoding/json's
// encoding of its view.
package jsonwtest

import (
	"encoding/json"
	"testing"
)

// Same fails tb unless, for every row, appendJSON writes exactly what
// encoding/json writes for view(row): a field added to the view and not to
// the appender, a renamed key or a different escape shows here.
func Same[T, V any](tb testing.TB, rows []T, appendJSON func(*T, []byte) []byte, view func(T) V) {
	tb.Helper()
	for i := range rows {
		want, err := json.Marshal(view(rows[i]))
		if err != nil {
			tb.Fatal(err)
		}
		if got := appendJSON(&rows[i], []byte("[")); string(got[1:]) != string(want) {
			tb.Errorf("row %d:\n got %s\nwant %s", i, got[1:], want)
		}
	}
}
