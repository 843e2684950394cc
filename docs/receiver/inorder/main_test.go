package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/webhook"
)

// TestRepeatsAndLateEventsChangeNothing sends a task's status moves to the
// receiver as pmapi may deliver them: out of order (parallel transactions, a
// retry arriving late), some twice (a replay, a resend after a crash), two of
// them in one microsecond. The task ends in the status of its latest move,
// each move is applied at most once, and an unsigned body is refused.
func TestRepeatsAndLateEventsChangeNothing(t *testing.T) {
	const secret = "whsec_test_0123456789"
	s := newTasks()
	srv := httptest.NewServer(s.handler(secret))
	defer srv.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := []string{"IN_PROGRESS", "IN_REVIEW", "DONE", "IN_PROGRESS", "DONE", "TODO"}
	var bodies [][]byte
	for i, to := range statuses {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if i == 4 {
			// The same microsecond as the move before: the id decides.
			at = t0.Add(3 * time.Millisecond)
		}
		b, _ := json.Marshal(webhook.Body{
			ID: fmt.Sprintf("evt_%d", i), EventID: pmapi.FormatID(webhook.EventPrefix, pmapi.NewID()),
			Type: "task.status_changed", OccurredAt: at, SentAt: time.Now(),
			Data: json.RawMessage(`{"taskId":"tsk_1","to":"` + to + `"}`),
		})
		bodies = append(bodies, b)
	}
	// Every one in a random order, then three again, the last an old one.
	order := append(rand.Perm(len(bodies)), 0, 5, 3)
	for _, i := range order {
		post(t, srv.URL, bodies[i], webhook.Sign(bodies[i], time.Now(), secret), http.StatusNoContent)
	}
	if s.status["tsk_1"] != "TODO" || len(s.seen) != len(bodies) {
		t.Errorf("task %s after %d distinct events (order %v); want TODO after %d",
			s.status["tsk_1"], len(s.seen), order, len(bodies))
	}
	post(t, srv.URL, bodies[0], "t=1,v1=00", http.StatusBadRequest)
}

func post(t *testing.T, url string, body []byte, sig string, want int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("X-Service-Signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("answered %d, want %d", resp.StatusCode, want)
	}
}

// TestTheGuideShowsThisFile: docs/webhooks.md's de-duplicating receiver is
// this file, character for character.
func TestTheGuideShowsThisFile(t *testing.T) {
	code, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../../webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), "```go\n"+string(code)+"```\n") {
		t.Error("docs/webhooks.md's de-duplicating receiver differs from docs/receiver/inorder/main.go; " +
			"paste the file into the guide")
	}
}
