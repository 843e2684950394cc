package main

import "testing"

// TestPerUnitFoldsValuesLists: entries that differ only in the rows of a
// VALUES list are one statement; the rest are divided by the units and sorted
// by time, and those under half a microsecond a unit are left out.
func TestPerUnitFoldsValuesLists(t *testing.T) {
	rows := []statementRow{
		{Query: "insert into events (a, b) values ($1, $2)", Calls: 100, Millis: 10, Rows: 100},
		{Query: "insert into events (a, b) values ($1, $2), ($3, $4)", Calls: 100, Millis: 30, Rows: 200},
		{Query: "select  1\n\tfrom x", Calls: 400, Millis: 4, Rows: 400},
		{Query: "vacuum river_job", Calls: 1, Millis: 0.05},
	}
	got := perUnit(rows, 200)
	if len(got) != 2 {
		t.Fatalf("statements %+v, want the insert folded into one and the cheap vacuum left out", got)
	}
	if got[0].Query != "insert into events (a, b) values (...)" || got[0].CallsPerUnit != 1 ||
		got[0].MicrosPerUnit != 200 ||
		got[0].RowsPerCall != 1.5 {
		t.Errorf("the insert: %+v", got[0])
	}
	if got[1].Query != "select 1 from x" || got[1].CallsPerUnit != 2 || got[1].MicrosPerUnit != 20 {
		t.Errorf("the select: %+v", got[1])
	}
}
