package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
)

// loadClient drives pmapi in the closed loops. It is fasthttp's client rather
// than net/http's because on a 2-core machine every cycle the load generator
// spends is taken from pmapi and PostgreSQL, and pgbench, the reference, drives
// PostgreSQL from C; net/http cost about as much CPU per request as pmapi did.
type loadClient struct {
	c      *fasthttp.Client
	header [][2]string
}

func newLoadClient(conc int, header http.Header) *loadClient {
	lc := &loadClient{c: &fasthttp.Client{
		MaxConnsPerHost: conc,
		// Below the API's read timeout: see httpClient.
		MaxIdleConnDuration: 20 * time.Second,
		ReadTimeout:         30 * time.Second,
		WriteTimeout:        30 * time.Second,
		// Wait for a free connection instead of failing when all are busy.
		MaxConnWaitTimeout: 30 * time.Second,
	}}
	for k, vs := range header {
		for _, v := range vs {
			lc.header = append(lc.header, [2]string{k, v})
		}
	}
	return lc
}

// do sends one request with the client's headers and returns the answer's body
// (a copy); non-2xx is an error.
func (lc *loadClient) do(method, url string, body []byte) ([]byte, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	for _, h := range lc.header {
		req.Header.Set(h[0], h[1])
	}
	if body != nil {
		req.SetBodyRaw(body)
	}
	if err := lc.c.Do(req, resp); err != nil {
		return nil, err
	}
	raw := append([]byte(nil), resp.Body()...)
	if code := resp.StatusCode(); code < 200 || code >= 300 {
		return raw, &statusError{fmt.Sprintf("%s %s: %d %s", method, url, code, truncate(raw, 200))}
	}
	return raw, nil
}
