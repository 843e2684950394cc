package envelope

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func answer(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body))}
}

func TestDataReadsA2xxAndNamesEverythingElse(t *testing.T) {
	t.Parallel()
	got, err := Data(answer(201, `{"data":{"id":"prj_1"}}`), "POST /x")
	if err != nil || got["id"] != "prj_1" {
		t.Errorf("2xx: %v, %v; want the data", got, err)
	}
	for _, a := range []*http.Response{answer(404, `{"error":{"code":"NOT_FOUND"}}`), answer(200, `not json`)} {
		if _, err := Data(a, "POST /x"); err == nil || !strings.HasPrefix(err.Error(), "POST /x: ") {
			t.Errorf("status %d: %v; want an error naming the request", a.StatusCode, err)
		}
	}
}
