package api

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"sync"

	"github.com/cespare/xxhash/v2"
	gojson "github.com/goccy/go-json"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// Conditional requests (RFC 9110 section 13; docs/decisions/reads.md,
// "Conditional requests"). The entity tag of an answer is a hash of its exact
// body, so it changes with anything the answer shows (a field, a list's
// members or their order, the next cursor) and costs no database round trip.

const (
	headerETag        = "ETag"
	headerIfNoneMatch = "If-None-Match"
	headerIfMatch     = "If-Match"
	// A client may keep an answer but asks again each time (with the ETag it
	// holds); no shared cache keeps it, and one credential's answer is never
	// another's.
	revalidateCacheControl = "private, no-cache"
	revalidateVary         = "Authorization, X-Client-ID, Cookie"
)

// ETag is the strong entity tag of body: its 64-bit xxHash, base64url,
// quoted. 64 bits rather than Fiber's CRC-32, whose 32 bits two versions of a
// busy list can share (a client holding the old tag would then miss the
// change, and an If-Match would pass against a stale copy); xxHash rather
// than SHA-256, which costs 15 µs on a 20 KB list page against 2: a tag needs
// no resistance to an attacker, who can only read answers of their own.
func ETag(body []byte) string {
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(body))
	b := make([]byte, 0, 13)
	b = append(b, '"')
	b = base64.RawURLEncoding.AppendEncode(b, sum[:])
	return string(append(b, '"'))
}

// Revalidates reports whether op's answers carry an ETag and honour
// If-None-Match: the API's GETs under /openapi/v1 answered in the envelope
// (with a key, an access token or the console session). The admin API and
// OAuth's public documents do not: operators do not poll them, and the
// export streams.
func (o Operation) Revalidates() bool {
	return o.Method == http.MethodGet && (o.Auth == AuthKey || o.Auth == AuthSession) && !o.Raw && !o.HTML
}

// revalidate runs a conditional GET: the answer's ETag goes on every 200, and
// when If-None-Match names it the answer is 304 with no body. The handler
// runs first, so a row the caller cannot see stays 404 whatever tag it sends.
func revalidate(c *fiber.Ctx) error {
	given, err := parseTags(headerIfNoneMatch, c.Get(headerIfNoneMatch))
	if err != nil {
		return err
	}
	if err := c.Next(); err != nil {
		return err
	}
	res := c.Response()
	if res.StatusCode() != http.StatusOK {
		return nil
	}
	tag := ETag(res.Body())
	// RFC 9110 section 15.4.5: a 304 carries the ETag, Cache-Control and Vary
	// the 200 would have carried.
	c.Set(headerETag, tag)
	if len(res.Header.Peek(fiber.HeaderCacheControl)) == 0 {
		// A handler's own (no-store for an answer holding a secret) stands.
		c.Set(fiber.HeaderCacheControl, revalidateCacheControl)
	}
	c.Set(fiber.HeaderVary, revalidateVary)
	if given.weakMatch(tag) {
		// A 304 costs the caller no request of its rate limit.
		RefundRate(c)
		res.ResetBody()
		res.Header.Del(fiber.HeaderContentType)
		res.SetStatusCode(http.StatusNotModified)
	}
	return nil
}

// entityTags is a parsed If-None-Match or If-Match: "*" or a list of tags.
type entityTags struct {
	any  bool
	tags []string // each with its quotes; weak ones with their W/
}

// weakMatch is If-None-Match's comparison (RFC 9110 section 8.8.3.2): a weak
// tag matches its strong twin.
func (e entityTags) weakMatch(tag string) bool {
	if e.any {
		return true
	}
	for _, t := range e.tags {
		if t == tag || (len(t) > 2 && t[:2] == "W/" && t[2:] == tag) {
			return true
		}
	}
	return false
}

// strongMatch is If-Match's comparison: a weak tag never matches.
func (e entityTags) strongMatch(tag string) bool {
	if e.any {
		return true
	}
	for _, t := range e.tags {
		if t == tag {
			return true
		}
	}
	return false
}

// parseTags reads an If-None-Match or If-Match value (RFC 9110 section 8.8.3):
// "*", or entity tags separated by commas. Empty is no condition; anything
// else is a 400 naming the header, rather than a condition silently dropped.
func parseTags(header, v string) (entityTags, error) {
	var e entityTags
	s := trimOWS(v)
	if s == "*" {
		e.any = true
		return e, nil
	}
	for {
		// RFC 9110 section 5.6.1: empty list elements are ignored.
		for s != "" && (s[0] == ',' || s[0] == ' ' || s[0] == '\t') {
			s = s[1:]
		}
		if s == "" {
			break
		}
		start := 0
		if len(s) > 2 && s[:2] == "W/" {
			start = 2
		}
		if len(s) < start+2 || s[start] != '"' {
			return e, badTags(header)
		}
		end := start + 1
		for end < len(s) && s[end] != '"' {
			if c := s[end]; c < 0x21 || c == 0x7f {
				return e, badTags(header)
			}
			end++
		}
		if end == len(s) {
			return e, badTags(header)
		}
		e.tags = append(e.tags, s[:end+1])
		s = trimOWS(s[end+1:])
		if s != "" && s[0] != ',' {
			return e, badTags(header)
		}
	}
	if len(e.tags) == 0 && v != "" {
		return e, badTags(header)
	}
	return e, nil
}

func trimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func badTags(header string) error {
	return pmapi.Errorf(pmapi.CodeValidation,
		`%s must be "*" or entity tags as an ETag header gave them, such as "abc" or W/"abc", separated by commas`,
		header).With("field", header)
}

// Preconditions: an update's If-Match travels in its context to the store,
// which compares it with the row's representation inside the transaction,
// under the row lock the update takes anyway, so no change can slip in
// between the comparison and the write.

type preconditionKey struct{}

// precondition is an If-Match on its way to the store. It holds for the
// first row a store checks it against (the one the request names: its store
// checks before touching any other); a cascade to other rows in the same
// transaction is not held to it, and a transaction run again after a
// serialization failure checks the same row again.
type precondition struct {
	tags entityTags
	mu   sync.Mutex
	row  *string
}

// requireMatch is the middleware of an operation that changes one resource:
// it hands the If-Match it was sent, if any, to the store (IfMatch).
func requireMatch(c *fiber.Ctx) error {
	v := c.Get(headerIfMatch)
	if v == "" {
		return c.Next()
	}
	tags, err := parseTags(headerIfMatch, v)
	if err != nil {
		return err
	}
	c.SetUserContext(context.WithValue(c.UserContext(), preconditionKey{}, &precondition{tags: tags}))
	return c.Next()
}

// IfMatch checks the request's If-Match against data, the row id as its
// detail GET shows it (its view), read under the change's row lock: nil when
// there is no If-Match or one of its tags is the ETag that GET answers with,
// 412 PRECONDITION_FAILED otherwise. A store calls it right after locking the
// row the request names, before it writes anything.
func IfMatch(ctx context.Context, id uuid.UUID, data any) error {
	return IfMatchRead(ctx, id, func() (any, error) { return data, nil })
}

// IfMatchRead is IfMatch for a detail that takes more than the locked row
// (an analysis with its corrective actions): read makes it, and runs only
// when there is a tag to compare it with.
func IfMatchRead(ctx context.Context, id uuid.UUID, read func() (any, error)) error {
	return ifMatchKey(ctx, id.String(), read)
}

// ifMatchApp is IfMatch for an app, whose key is its client id rather than
// a uuid.
func ifMatchApp(ctx context.Context, clientID string, data any) error {
	return ifMatchKey(ctx, "app:"+clientID, func() (any, error) { return data, nil })
}

// ifMatchKey is the check behind IfMatch and ifMatchApp; key names the row.
func ifMatchKey(ctx context.Context, key string, read func() (any, error)) error {
	p, ok := ctx.Value(preconditionKey{}).(*precondition)
	if !ok {
		return nil
	}
	p.mu.Lock()
	if p.row == nil {
		p.row = &key
	}
	mine := *p.row == key
	p.mu.Unlock()
	if !mine || p.tags.any {
		// "*" asks only that the resource exist, which the lock has shown.
		return nil
	}
	data, err := read()
	if err != nil {
		return err
	}
	body, err := gojson.Marshal(envelope{Success: true, Data: data})
	if err != nil {
		return err
	}
	if !p.tags.strongMatch(ETag(body)) {
		return pmapi.Errorf(pmapi.CodePreconditionFailed,
			"the resource has changed since the ETag given in If-Match: nothing was changed; GET it again")
	}
	return nil
}
