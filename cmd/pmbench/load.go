package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/pmapi/pmapi/resource/webhook"
)

// loopResult is what a closed loop or a paced attack measured. Errors are
// non-2xx answers and transport errors; Non2xx the answers alone.
type loopResult struct {
	Requests  int
	Errors    int
	Non2xx    int
	FirstErr  string
	Elapsed   time.Duration
	Latencies []time.Duration
}

func (r loopResult) rps() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests-r.Errors) / r.Elapsed.Seconds()
}

// quantile of sorted durations, in milliseconds.
func quantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)))
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return float64(sorted[i].Microseconds()) / 1000
}

func sortDurations(d []time.Duration) []time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d
}

// maxPerWorker bounds a closed loop in count as well as in time.
const maxPerWorker = 2_000_000

// closedLoop runs conc goroutines, each sending its next request as soon as the
// previous one answered, for dur; do gets the worker's number and its count.
// Requests in flight at the end are let finish (a cancelled write may still
// commit, and the caller tracks each task's status).
func closedLoop(
	ctx context.Context,
	conc int,
	dur time.Duration,
	do func(ctx context.Context, worker, i int) error,
) loopResult {
	var mu sync.Mutex
	var res loopResult
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(dur)
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1024)
			errs, non2xx, first := 0, 0, ""
			for i := 0; i < maxPerWorker && ctx.Err() == nil && time.Now().Before(deadline); i++ {
				t0 := time.Now()
				err := do(ctx, w, i)
				lat = append(lat, time.Since(t0))
				if err != nil {
					errs++
					var se *statusError
					if errors.As(err, &se) {
						non2xx++
					}
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			res.Latencies = append(res.Latencies, lat...)
			res.Requests += len(lat)
			res.Errors += errs
			res.Non2xx += non2xx
			if res.FirstErr == "" {
				res.FirstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	sortDurations(res.Latencies)
	return res
}

// paced sends requests at a constant rate for dur with vegeta, and hands every
// result to each (which may be nil).
func paced(
	ctx context.Context,
	rate float64,
	dur time.Duration,
	conc int,
	tr vegeta.Targeter,
	each func(*vegeta.Result),
) loopResult {
	if rate < 1 {
		rate = 1
	}
	// Our client, so its idle connections close before the API's read timeout
	// and are closed when the attack ends.
	client := httpClient(conc, nil)
	defer client.CloseIdleConnections()
	att := vegeta.NewAttacker(vegeta.Client(client), vegeta.Workers(uint64(conc)), vegeta.MaxWorkers(uint64(4*conc)),
		vegeta.MaxBody(1<<20))
	pacer := vegeta.ConstantPacer{Freq: int(rate + 0.5), Per: time.Second}
	var res loopResult
	start := time.Now()
	results := att.Attack(tr, pacer, dur, "pmbench")
	for r := range results {
		if ctx.Err() != nil {
			att.Stop()
		}
		res.Requests++
		res.Latencies = append(res.Latencies, r.Latency)
		if r.Code < 200 || r.Code >= 300 {
			res.Errors++
			if r.Code != 0 { // 0: no answer (a transport error)
				res.Non2xx++
			}
			if res.FirstErr == "" {
				res.FirstErr = fmt.Sprintf("%d %s %s", r.Code, r.Error, truncate(r.Body, 200))
			}
		}
		if each != nil {
			each(r)
		}
	}
	res.Elapsed = time.Since(start)
	sortDurations(res.Latencies)
	return res
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// httpClient returns a keep-alive client with room for conc idle connections.
func httpClient(conc int, tlsConf *tls.Config) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 4 * conc, MaxIdleConnsPerHost: 4 * conc,
		// Below the API's 30 s read timeout, after which it answers a connection
		// that never carried a request with 408 and closes it.
		IdleConnTimeout:    20 * time.Second,
		DisableCompression: true, TLSClientConfig: tlsConf,
	}}
}

// send does one request and reads the whole answer; non-2xx is an error.
func send(ctx context.Context, c *http.Client, method, url string, header http.Header, body []byte) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return raw, &statusError{fmt.Sprintf("%s %s: %d %s", method, url, resp.StatusCode, truncate(raw, 200))}
	}
	return raw, nil
}

// statusError is an answer with a status other than 2xx, as opposed to a
// request that got no answer.
type statusError struct{ msg string }

func (e *statusError) Error() string { return e.msg }

// pgbench runs the PostgreSQL client that ships with the server.
type pgbench struct {
	bin        string
	url        string
	postmaster int // for the cluster's CPU time; 0 when not on this machine
}

func findPgbench() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			return d, nil
		}
	}
	return "", errors.New("pgbench not found on PATH or under /usr/lib/postgresql/*/bin")
}

func (p pgbench) init(ctx context.Context, scale int) error {
	cmd := exec.CommandContext(ctx, p.bin, "-i", "-q", "-s", strconv.Itoa(scale), p.url)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgbench -i: %v\n%s", err, out)
	}
	return nil
}

var (
	tpsRE = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	txRE  = regexp.MustCompile(`number of transactions actually processed: ([0-9]+)`)
)

// pgbenchResult is one pgbench run: its rate and, per 1,000 transactions, the
// CPU seconds PostgreSQL and pgbench itself used.
type pgbenchResult struct {
	TPS                    float64
	PostgresCPUPer1k       float64
	PostgresSystemCPUPer1k float64
	ClientCPUPer1k         float64
	transactionsCounted    int
}

// run is one pgbench run; script is "select-only" (-S) or "tpcb-like". A run
// that finished no transaction (on a busy machine, a one-second run can spend
// all of it opening connections) is run once more, three times as long.
func (p pgbench) run(ctx context.Context, script string, clients int, dur time.Duration) (pgbenchResult, error) {
	res, err := p.runOnce(ctx, script, clients, dur)
	if errors.Is(err, errNoTransactions) {
		res, err = p.runOnce(ctx, script, clients, 3*dur)
	}
	return res, err
}

var errNoTransactions = errors.New("no tps in its output")

func (p pgbench) runOnce(ctx context.Context, script string, clients int, dur time.Duration) (pgbenchResult, error) {
	var res pgbenchResult
	secs := max(1, int(dur.Round(time.Second)/time.Second))
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", "2", "-T", strconv.Itoa(secs)}
	if script == "select-only" {
		args = append(args, "-S")
	} else {
		args = append(args, "-b", script)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+2*time.Minute)
	defer cancel()
	pg0, pgSys0 := postgresCPUSeconds(p.postmaster), postgresSystemSeconds(p.postmaster)
	cmd := exec.CommandContext(ctx, p.bin, append(args, p.url)...)
	out, err := cmd.CombinedOutput()
	pg1 := settledPostgresCPUSeconds(p.postmaster)
	pgSys1 := postgresSystemSeconds(p.postmaster)
	if err != nil {
		return res, fmt.Errorf("pgbench %s: %v\n%s", script, err, out)
	}
	m := tpsRE.FindSubmatch(out)
	if m == nil {
		return res, fmt.Errorf("pgbench %s: %w:\n%s", script, errNoTransactions, out)
	}
	if res.TPS, err = strconv.ParseFloat(string(m[1]), 64); err != nil {
		return res, err
	}
	if m := txRE.FindSubmatch(out); m != nil {
		res.transactionsCounted, _ = strconv.Atoi(string(m[1]))
	}
	if n := float64(res.transactionsCounted); n > 0 {
		if p.postmaster != 0 {
			res.PostgresCPUPer1k = (pg1 - pg0) / n * 1000
			res.PostgresSystemCPUPer1k = (pgSys1 - pgSys0) / n * 1000
		}
		st := cmd.ProcessState
		res.ClientCPUPer1k = (st.UserTime() + st.SystemTime()).Seconds() / n * 1000
	}
	return res, nil
}

// receiver is the local HTTPS webhook endpoint: it checks each signature,
// counts deliveries and notes when each arrived.
type receiver struct {
	srv      *httptest.Server
	secret   atomic.Value // string
	mu       sync.Mutex
	arrivals map[string]time.Time // task id + updatedAt → receipt
	count    atomic.Int64
	badSig   atomic.Int64
	last     atomic.Int64 // unix nanos of the latest receipt
	sample   []byte       // the first delivery body, for the raw client (under mu)
}

func newReceiver() *receiver {
	r := &receiver{arrivals: map[string]time.Time{}}
	r.secret.Store("")
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.StartTLS()
	return r
}

type deliveryBody struct {
	Type string `json:"type"`
	Data struct {
		ID        string `json:"id"`
		UpdatedAt string `json:"updatedAt"`
	} `json:"data"`
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(400)
		return
	}
	if webhook.Verify(req.Header.Get(webhook.SignatureHeader), body, r.secret.Load().(string), now) != nil {
		r.badSig.Add(1)
	}
	var b deliveryBody
	ok := json.Unmarshal(body, &b) == nil && b.Data.ID != ""
	r.mu.Lock()
	if ok {
		r.arrivals[b.Data.ID+"|"+b.Data.UpdatedAt] = now
	}
	if r.sample == nil {
		r.sample = body
	}
	r.mu.Unlock()
	r.count.Add(1)
	r.last.Store(now.UnixNano())
	w.WriteHeader(http.StatusNoContent)
}

// firstBody is the first delivery body received, or nil.
func (r *receiver) firstBody() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sample
}

// reset starts a new count.
func (r *receiver) reset() {
	r.mu.Lock()
	r.arrivals = map[string]time.Time{}
	r.mu.Unlock()
	r.count.Store(0)
	r.badSig.Store(0)
	r.last.Store(0)
}

// latencies pairs each commit (the client's receipt of the update's answer)
// with the delivery of that update, and returns the sorted differences and how
// many commits were delivered.
func (r *receiver) latencies(commits map[string]time.Time) ([]time.Duration, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for k, at := range commits {
		if got, ok := r.arrivals[k]; ok {
			out = append(out, got.Sub(at))
		}
	}
	return sortDurations(out), len(out)
}

// waitCount waits until n deliveries arrived, at most within.
func (r *receiver) waitCount(ctx context.Context, n int, within time.Duration) {
	deadline := time.Now().Add(within)
	for int(r.count.Load()) < n && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
}
