package pmapisdk

import (
	"errors"
	"net/http"
)

// Conditional requests: every GET answer carries an ETag. Send it back as the
// IfNoneMatch parameter to poll (an unchanged answer is 304 with no body, and
// costs no request of the rate limit), or as the IfMatch parameter of an
// update to change only the version read (a stale one is an *APIError with
// ErrorCodePreconditionFailed, and nothing is changed).

// ETag returns the ETag of an answer (the XxxResponse's HTTPResponse), or ""
// when it has none.
func ETag(r *http.Response) string {
	if r == nil {
		return ""
	}
	return r.Header.Get("ETag")
}

// NotModified reports whether r is a 304: the answer whose ETag was sent in
// IfNoneMatch is still current, and the generated JSON200 is nil. Check
// returns nil for it.
func NotModified(r Response) bool { return r.StatusCode() == http.StatusNotModified }

// PreconditionFailed reports whether err is the 412 of an update whose
// IfMatch named a version that is no longer current: read the resource again,
// and decide again.
func PreconditionFailed(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == ErrorCodePreconditionFailed
}
