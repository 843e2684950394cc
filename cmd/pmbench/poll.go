package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"

	"github.com/valyala/fasthttp"
)

// pollTargets caps how many tasks the detail poll holds an ETag of: enough
// that the reads spread over the table as read-detail's do.
const pollTargets = 1000

// poll is a GET sent again with the ETag its last answer carried, as a client
// polling for changes sends it: nothing changes during the phase, so each
// answer must be 304 with no body (anything else is counted as an error).
type poll struct {
	urls, tags []string
}

// pollOf asks each of urls once for its ETag.
func (b *bench) pollOf(urls []string) (poll, error) {
	p := poll{urls: urls, tags: make([]string, len(urls))}
	for i, u := range urls {
		tag, status, err := b.load.conditional(u, "")
		if err != nil || status != fasthttp.StatusOK || tag == "" {
			return p, fmt.Errorf("GET %s: %d, ETag %q, %v", u, status, tag, err)
		}
		p.tags[i] = tag
	}
	return p, nil
}

// pollUnchanged runs the closed loop of conditional GETs over p.
func (b *bench) pollUnchanged(ctx context.Context, name string, p poll) Scenario {
	return b.measure(name, "closed-loop", func() loopResult {
		return closedLoop(ctx, b.o.Concurrency, b.o.Duration, func(ctx context.Context, w, i int) error {
			n := rand.IntN(len(p.urls))
			_, status, err := b.load.conditional(p.urls[n], p.tags[n])
			if err == nil && status != fasthttp.StatusNotModified {
				err = &statusError{fmt.Sprintf("GET %s with its ETag: %d, want 304", p.urls[n], status)}
			}
			return err
		})
	})
}

// pollScenarios are read-detail and read-list polled unchanged, run right
// after them so each is set beside the 200 path it skips.
func (b *bench) pollScenarios(ctx context.Context) ([]Scenario, error) {
	details := make([]string, 0, min(pollTargets, len(b.tasks)))
	for i := range cap(details) {
		details = append(details, b.detailURL(i))
	}
	lists := make([]string, 0, len(b.projects))
	for _, p := range b.projects {
		lists = append(lists, b.base+"/openapi/v1/resource/task/list?limit=50&projectId="+url.QueryEscape(p))
	}
	var out []Scenario
	for _, s := range []struct {
		name string
		urls []string
	}{{"poll unchanged read-detail", details}, {"poll unchanged read-list", lists}} {
		p, err := b.pollOf(s.urls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		out = append(out, b.pollUnchanged(ctx, s.name, p))
	}
	return out, nil
}

// conditional sends GET url with If-None-Match: ifNoneMatch (none when
// empty) and returns the answer's ETag and status; only a failure to get an
// answer is an error.
func (lc *loadClient) conditional(url, ifNoneMatch string) (etag string, status int, err error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI(url)
	for _, h := range lc.header {
		req.Header.Set(h[0], h[1])
	}
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	if err := lc.c.Do(req, resp); err != nil {
		return "", 0, err
	}
	return string(resp.Header.Peek("ETag")), resp.StatusCode(), nil
}
