package jsonw

import "github.com/google/uuid"

// Rows is a list page's items being written: JSON objects appended to B,
// comma separated, each under its row's key. A store reads one row more than
// the page holds, so Rows remembers where the last object starts and the key
// of the one before it, which is all Cut needs to end the page there.
type Rows struct {
	B    []byte
	n    int
	last int          // where the last object (its comma included) starts
	keys [2]uuid.UUID // the keys of the last object and of the one before
	ats  [2]int64     // their updatedAt in a walk by updatedAt (StartAt)
	// ByUpdate says the page is a walk by updatedAt (StartAt): its cursor
	// holds the last row's time too.
	ByUpdate bool
	// Dates are the page's time columns' last dates (RowJSON.Append).
	Dates Dates
}

// Start begins the next object, of the row keyed key: the caller appends
// the object to B.
func (r *Rows) Start(key uuid.UUID) {
	r.last = len(r.B)
	if r.n > 0 {
		r.B = append(r.B, ',')
	}
	r.n++
	r.keys[0], r.keys[1] = r.keys[1], key
}

// StartAt is Start for a row of a walk by updatedAt, us its updatedAt in
// microseconds since the Unix epoch.
func (r *Rows) StartAt(key uuid.UUID, us int64) {
	r.Start(key)
	r.ByUpdate = true
	r.ats[0], r.ats[1] = r.ats[1], us
}

// LastAt is the updatedAt of the row Cut answered, in a walk by updatedAt.
func (r *Rows) LastAt() int64 { return r.ats[0] }

// Len is how many objects B holds.
func (r *Rows) Len() int { return r.n }

// Cut keeps the first limit objects when the store found limit+1 (never
// more) and answers the key of the last one kept, where the next page
// starts; more is false when the store found no more than limit.
func (r *Rows) Cut(limit int) (last uuid.UUID, more bool) {
	if r.n <= limit {
		return uuid.Nil, false
	}
	r.B = r.B[:r.last]
	r.n--
	return r.keys[0], true
}
