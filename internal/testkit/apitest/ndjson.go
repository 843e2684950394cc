package apitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// A workspace's export answers application/x-ndjson, which kin-openapi cannot
// decode on its own; the document's schema is that of one line, so every line
// is checked against it here, and the first is handed on for the validator's
// own check.
func init() {
	openapi3filter.RegisterBodyDecoder("application/x-ndjson",
		func(body io.Reader, _ http.Header, schema *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			sc := bufio.NewScanner(body)
			sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
			var first any
			for n := 1; sc.Scan(); n++ {
				var line any
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					return nil, fmt.Errorf("line %d is not JSON: %w", n, err)
				}
				if schema != nil && schema.Value != nil {
					if err := schema.Value.VisitJSON(line); err != nil {
						return nil, fmt.Errorf("line %d: %w", n, err)
					}
				}
				if n == 1 {
					first = line
				}
			}
			if first == nil {
				first = map[string]any{}
			}
			return first, sc.Err()
		})
}
