// Command inorder is the receiver of docs/webhooks.md that de-duplicates and
// orders: it checks each delivery's signature with stripe-go's verifier,
// drops an event it has seen (by eventId), and applies a task's events only
// when they are newer, by (occurredAt, eventId), than what it last applied to
// that task. It keeps its state in memory; a real receiver keeps the same two
// things in its database (a unique index on the event id, and the time and id
// of the last event per record).
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v84/webhook"
)

// event is what the receiver reads of a delivery's body.
type event struct {
	EventID    string    `json:"eventId"`
	Type       string    `json:"type"`
	OccurredAt time.Time `json:"occurredAt"`
	Data       struct {
		TaskID string `json:"taskId"` // task.status_changed, task.assigned, ...
		ID     string `json:"id"`     // task.created, task.updated: the task's view
		To     string `json:"to"`
		Status string `json:"status"`
	} `json:"data"`
}

// after orders events: by occurredAt, then by eventId (the events of one
// transaction can share a microsecond; their ids increase in the order made).
func (e event) after(o event) bool {
	if !e.OccurredAt.Equal(o.OccurredAt) {
		return e.OccurredAt.After(o.OccurredAt)
	}
	return e.EventID > o.EventID
}

// tasks is the receiver's state: the events it has processed and, per task,
// the last event applied and the status it set.
type tasks struct {
	mu     sync.Mutex
	seen   map[string]bool
	last   map[string]event
	status map[string]string
}

func newTasks() *tasks {
	return &tasks{seen: map[string]bool{}, last: map[string]event{}, status: map[string]string{}}
}

// apply processes one event once, and only if it is newer than the task's
// last; it returns the task and status it set, if it set one.
func (s *tasks) apply(e event) (task, status string, changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[e.EventID] {
		return "", "", false // a repeat: a retry that had arrived, a replay, or a resend after a crash
	}
	s.seen[e.EventID] = true
	task, status = e.Data.TaskID, e.Data.To
	if e.Type == "task.created" || e.Type == "task.updated" {
		task, status = e.Data.ID, e.Data.Status
	}
	if task == "" || status == "" {
		return "", "", false
	}
	if prev, ok := s.last[task]; ok && !e.after(prev) {
		return "", "", false // older than what the task already shows
	}
	s.last[task], s.status[task] = e, status
	return task, status, true
}

func (s *tasks) handler(secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		signature := r.Header.Get("X-Service-Signature")
		if err := webhook.ValidatePayloadWithTolerance(body, signature, secret, 300*time.Second); err != nil {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		var e event
		if err := json.Unmarshal(body, &e); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if task, status, changed := s.apply(e); changed {
			log.Printf("%s: task %s is %s", e.Type, task, status)
		}
		w.WriteHeader(http.StatusNoContent) // a repeat is answered 2xx too, or it comes again
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:4242", "where to listen")
	flag.Parse()
	http.Handle("POST /webhook", newTasks().handler(os.Getenv("WEBHOOK_SECRET")))
	log.Printf("listening on http://%s/webhook", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
