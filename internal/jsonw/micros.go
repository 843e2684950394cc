package jsonw

// TimeMicros appends the instant us microseconds after the Unix epoch as
// Time appends it in UTC, without a time.Time: the lists write five times a
// row, and time.Time's formatting was half a row's CPU (BenchmarkRowJSON in
// resource/internal/storekit). us must lie in the years 0 to 9999
// (MinMicros, MaxMicros), which is all Time's JSON can hold.
func TimeMicros(b []byte, us int64) []byte {
	var d Date
	return d.TimeMicros(b, us)
}

// A Date writes times as TimeMicros does, remembering the last one's date:
// a column's times on a page fall on few days (tasks made the same week,
// updated the same day), and the civil date was a third of a time's CPU
// (BenchmarkRowJSON in resource/internal/storekit). The zero value is ready.
type Date struct {
	day  int64
	date [10]byte // "YYYY-MM-DD" of day
	set  bool
}

// Dates are a page's Dates, one a time column (Column).
type Dates [8]Date

// Column is the Date of a page's i-th time column; columns past the eighth
// share.
func (d *Dates) Column(i int) *Date { return &d[i%len(d)] }

// TimeMicros is the package's TimeMicros, through d.
func (d *Date) TimeMicros(b []byte, us int64) []byte {
	secs := floorDiv(us, 1_000_000)
	frac := us - secs*1_000_000
	days := floorDiv(secs, 86400)
	clock := secs - days*86400
	if !d.set || d.day != days {
		y, m, dd := civil(days)
		c, yy := y/100, y%100
		d.date = [10]byte{pairs[2*c], pairs[2*c+1], pairs[2*yy], pairs[2*yy+1], '-',
			pairs[2*m], pairs[2*m+1], '-', pairs[2*dd], pairs[2*dd+1]}
		d.day, d.set = days, true
	}
	b = append(b, '"')
	b = append(b, d.date[:]...)
	b = append(b, 'T')
	b = append2(b, int(clock/3600))
	b = append(b, ':')
	b = append2(b, int(clock/60%60))
	b = append(b, ':')
	b = append2(b, int(clock%60))
	if frac != 0 {
		b = append(b, '.')
		b = append2(b, int(frac/10000))
		b = append2(b, int(frac/100%100))
		b = append2(b, int(frac%100))
		for b[len(b)-1] == '0' { // trimmed as RFC3339Nano trims
			b = b[:len(b)-1]
		}
	}
	return append(b, 'Z', '"')
}

// MinMicros and MaxMicros bound TimeMicros: 0000-01-01 and the last
// microsecond of 9999, in microseconds since the Unix epoch.
const (
	MinMicros = -62167219200 * 1_000_000
	MaxMicros = 253402300800*1_000_000 - 1
)

// pairs holds "00" to "99", so that two digits cost one division.
const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859606162636465666768697071727374757677787980" +
	"81828384858687888990919293949596979899"

// append2 appends n, from 0 to 99, in two digits.
func append2(b []byte, n int) []byte { return append(b, pairs[2*n], pairs[2*n+1]) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// civil is the proleptic Gregorian date of days since 1970-01-01 (Howard
// Hinnant's days_from_civil, inverted).
func civil(days int64) (year, month, day int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if mp >= 10 {
		month = int(mp - 9)
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, day
}
