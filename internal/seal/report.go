package seal

// Report is what a reseal did to one sealed column; `pmapi admin reseal`
// prints one per column.
type Report struct {
	Table  string `json:"table"`
	Column string `json:"column"`
	// Resealed values were rewritten under the current key.
	Resealed int `json:"resealed"`
	// Current values were under the current key already and left alone.
	Current int `json:"alreadyCurrent"`
	// Failed names the rows (their primary keys, never their values) whose
	// value opens under no configured key; they are left as they are.
	Failed []string `json:"failed"`
}
