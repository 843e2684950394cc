package api_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestSilentConnectionGets408: a connection on which no request arrives within
// the read timeout is answered 408 and closed. A client that opened it ahead of
// need reads that before its next request; Go's Transport and others treat a
// 408 there as the server closing an idle connection and retry elsewhere, while
// the 400 this used to be was taken as the answer to the request.
func TestSilentConnectionGets408(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(d *apitest.Config) { d.ReadTimeout = 200 * time.Millisecond })
	base := env.Listen(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading what the server sent on a silent connection: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Errorf("silent connection: %d, close %v; want 408 and the connection closed", resp.StatusCode, resp.Close)
	}
	var raw strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&raw); err != nil {
		t.Fatal(err)
	}
	env.ValidateError(t, []byte(raw.String()))

	// A client reusing its connections is not disturbed: it gets its answers
	// across pauses longer than the read timeout.
	client := &http.Client{Timeout: 5 * time.Second}
	for range 2 {
		r, err := client.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Fatalf("healthz: %d", r.StatusCode)
		}
		time.Sleep(400 * time.Millisecond)
	}
}
