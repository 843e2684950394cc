package rig

import "testing"

// TestLogsCountMultiShardErrors: pmbench's Citus phase counts the guard's
// error in pmapi's logs, also when the process's output arrives split
// mid-message.
func TestLogsCountMultiShardErrors(t *testing.T) {
	b := &TailBuffer{Max: 64}
	line := `{"level":"ERROR","msg":"request failed","cause":"ERROR: ` + MultiShardError + ` (SQLSTATE XX000)"}` + "\n"
	b.Write([]byte(line))
	b.Write([]byte(line[:70]))
	b.Write([]byte(line[70:]))
	b.Write([]byte(`{"level":"INFO","msg":"multi-task"}` + "\n"))
	b.Write([]byte(line + line))
	if n := b.MultiShardErrors(); n != 4 {
		t.Errorf("counted %d mentions, want 4", n)
	}
	if len(b.String()) > 64 {
		t.Errorf("kept %d bytes, want at most 64", len(b.String()))
	}
}
