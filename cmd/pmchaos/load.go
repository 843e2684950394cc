package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"
)

// ack is a write the API acknowledged (a 2xx with the resource in it): the
// database must hold it, and its event, whatever happened afterwards.
type ack struct {
	Kind      string // event prefix: task, risk, ...
	Op        string // created or updated
	ID        string
	UpdatedAt time.Time
}

// answer is one request that got a status, for the 4xx and 5xx tallies.
type answer struct {
	Start, End time.Time
	Status     int
	Code       string
	Op         string
	RetryAfter string // the Retry-After header of a 503
}

// kind is a resource the load writes: how to create one and how to change one
// so that something really changes (an update that changes nothing emits
// nothing).
type kind struct {
	name, create, update, idField string
	body                          func(c *client, n int) map[string]any
}

var kinds = []kind{
	{"project", "project/create", "project/update", "id", func(c *client, n int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("Chaos project %d-%d", c.id, n)}
	}},
	{"task", "task/create", "task/update", "taskId", func(c *client, n int) map[string]any {
		return map[string]any{
			"projectId": c.project(),
			"title":     fmt.Sprintf("Chaos task %d-%d", c.id, n),
			"priority":  1 + n%5,
		}
	}},
	{"risk", "risk/create", "risk/update", "riskId", func(c *client, n int) map[string]any {
		return map[string]any{"projectId": c.project(), "title": fmt.Sprintf("Chaos risk %d-%d", c.id, n),
			"severity": []string{"LOW", "MEDIUM", "HIGH", "CRITICAL"}[n%4]}
	}},
	{"note", "note/create", "note/update", "noteId", func(c *client, n int) map[string]any {
		return map[string]any{"projectId": c.project(), "body": fmt.Sprintf("Chaos note %d-%d", c.id, n)}
	}},
	{"action-item", "action-item/create", "action-item/update", "actionItemId", func(c *client, n int) map[string]any {
		return map[string]any{"projectId": c.project(), "title": fmt.Sprintf("Chaos action %d-%d", c.id, n)}
	}},
}

// updateFields keeps of a create body what an update of that kind takes.
func updateFields(k kind, b map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range []string{"name", "title", "priority", "severity", "body"} {
		if v, ok := b[f]; ok {
			out[f] = v
		}
	}
	return out
}

// load is the run's concurrent clients and what they were told.
type load struct {
	w    *world
	o    options
	http *http.Client

	mu        sync.Mutex
	acked     []ack
	answers   []answer
	transport []answer // requests that got no answer at all
	requests  int
}

func newLoad(w *world, o options) *load {
	return &load{w: w, o: o, http: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 2 * o.Concurrency, MaxIdleConnsPerHost: 2 * o.Concurrency, IdleConnTimeout: 20 * time.Second,
	}}}
}

// client is one goroutine of the load; it writes only what it created, one
// request at a time, so no two requests race for one row.
type client struct {
	id    int
	l     *load
	rnd   *rand.Rand
	n     int
	owned map[string][]string // kind -> ids it created
}

func (c *client) project() string {
	ps := c.owned["project"]
	return ps[c.rnd.IntN(len(ps))]
}

func (l *load) run(ctx context.Context, start time.Time, d time.Duration) {
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := range l.o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{id: i, l: l, rnd: rand.New(rand.NewPCG(l.o.Seed, uint64(i))), owned: map[string][]string{}}
			for ctx.Err() == nil && time.Now().Before(deadline) {
				c.step(ctx)
			}
		}()
	}
	wg.Wait()
}

// step creates a project until the client has one, then creates or updates
// something: updates as often as creates once there is something to update.
func (c *client) step(ctx context.Context) {
	c.n++
	k := kinds[0]
	if len(c.owned["project"]) > 0 {
		k = kinds[c.rnd.IntN(len(kinds))]
		if k.name == "project" && c.rnd.IntN(4) > 0 {
			k = kinds[1+c.rnd.IntN(len(kinds)-1)] // projects are a tenth of the writes
		}
	}
	body := k.body(c, c.n)
	ids := c.owned[k.name]
	if len(ids) == 0 || c.rnd.IntN(2) == 0 {
		if id, ok := c.l.write(ctx, k, "created", k.create, body); ok {
			c.owned[k.name] = append(c.owned[k.name], id)
		}
		return
	}
	upd := updateFields(k, body)
	upd[k.idField] = ids[c.rnd.IntN(len(ids))]
	c.l.write(ctx, k, "updated", k.update, upd)
}

// write sends one request and records its outcome; it returns the id of an
// acknowledged write.
func (l *load) write(ctx context.Context, k kind, op, path string, body map[string]any) (string, bool) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(
		ctx,
		http.MethodPost,
		l.w.base+"/openapi/v1/resource/"+path,
		bytes.NewReader(raw),
	)
	if err != nil {
		return "", false
	}
	req.Header.Set("Content-Type", "application/json")
	for h, v := range l.w.tenant.Key {
		req.Header.Set(h, v)
	}
	start := time.Now()
	resp, err := l.http.Do(req)
	if err != nil {
		l.mu.Lock()
		l.requests++
		l.transport = append(l.transport, answer{Start: start, End: time.Now(), Op: k.name + "." + op, Code: err.Error()})
		l.mu.Unlock()
		// As a client would, wait a little before trying an API that is
		// not there (it is restarting): the counts stay about requests.
		time.Sleep(backoff)
		return "", false
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var env struct {
		Data struct {
			ID        string    `json:"id"`
			UpdatedAt time.Time `json:"updatedAt"`
		} `json:"data"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(out, &env)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests++
	if resp.StatusCode >= 200 && resp.StatusCode < 300 && env.Data.ID != "" {
		l.acked = append(l.acked, ack{Kind: k.name, Op: op, ID: env.Data.ID, UpdatedAt: env.Data.UpdatedAt})
		return env.Data.ID, true
	}
	l.answers = append(
		l.answers,
		answer{Start: start, End: time.Now(), Status: resp.StatusCode, Code: env.Error.Code, Op: k.name + "." + op,
			RetryAfter: resp.Header.Get("Retry-After")},
	)
	if resp.StatusCode >= 500 {
		time.Sleep(backoff)
	}
	return "", false
}

// backoff is a client's pause after a failure it may retry.
const backoff = 50 * time.Millisecond

func (l *load) acks() []ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ack(nil), l.acked...)
}

// loadSummary is what the clients saw.
type loadSummary struct {
	Requests  int
	Acked     map[string]int // "task created" -> count
	Failed    []answer       // every non-2xx answer, in time order
	Transport []answer       // every request without an answer
}

func (l *load) summary() loadSummary {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := loadSummary{Requests: l.requests, Acked: map[string]int{},
		Failed: append([]answer(nil), l.answers...), Transport: append([]answer(nil), l.transport...)}
	for _, a := range l.acked {
		s.Acked[a.Kind+" "+a.Op]++
	}
	sort.Slice(s.Failed, func(i, j int) bool { return s.Failed[i].Start.Before(s.Failed[j].Start) })
	return s
}
