package pmapisdk

import (
	"encoding/json"
	"fmt"
)

// APIError is a failure the server answered, as its error envelope says it:
// compare Code with the ErrorCode constants (ErrorCodeInvalidTransition, ...).
type APIError struct {
	Status    int
	Code      ErrorCode
	Message   string
	Details   map[string]any
	RequestID string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("pmapi: %d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// Response is what every generated XxxResponse has.
type Response interface{ StatusCode() int }

// Check returns nil for a success answer, an *APIError for a failure (body is
// the response's Body). An answer that is not the error envelope (a proxy's
// page) is an *APIError with the code INTERNAL and the body as message.
func Check(r Response, body []byte) error {
	st := r.StatusCode()
	if st < 400 {
		return nil
	}
	var env ErrorEnvelope
	if err := json.Unmarshal(body, &env); err != nil || env.Error.Code == "" {
		return &APIError{Status: st, Code: ErrorCodeInternal, Message: string(body)}
	}
	return &APIError{
		Status:    st,
		Code:      env.Error.Code,
		Message:   env.Error.Message,
		Details:   env.Error.Details,
		RequestID: env.Error.RequestId,
	}
}
