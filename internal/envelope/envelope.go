// Package envelope reads the API's answer envelope as a client does, for the
// programs that call pmapi over HTTP for set-up: the demo seed (cmd/pmapi)
// and the rig of the bench and chaos tools (internal/rig).
package envelope

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Data is the data of a 2xx answer; any other answer, or one that is not the
// envelope, is an error naming what was asked, with the status and the body.
func Data(resp *http.Response, what string) (map[string]any, error) {
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Data map[string]any `json:"data"`
	}
	if resp.StatusCode >= 300 || json.Unmarshal(raw, &env) != nil {
		return nil, fmt.Errorf("%s: %d %s", what, resp.StatusCode, raw)
	}
	return env.Data, nil
}
