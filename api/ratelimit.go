package api

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
)

// rateLimiter keeps one token bucket per credential: `limit` requests per
// minute, refilled continuously, with a burst of the whole minute's
// allowance. With N replicas each keeps 1/N of every bucket (rate and
// burst), N being share(): a balancer that spreads a key's requests over
// them gives the key its limit in all, not N times it
// (docs/decisions/usage-and-rate-budget.md).
type rateLimiter struct {
	defaultPerMinute int
	// share is how many replicas divide each budget; nil means this one alone.
	share     func() int
	mu        sync.Mutex
	buckets   map[uuid.UUID]*bucket
	lastSweep time.Time
}

// bucket is this replica's part of a key's budget. golang.org/x/time/rate,
// which this was before, has no way to give one token back exactly (a
// reservation's Cancel returns less once later requests have been let
// through), and a 304 answer must cost nothing: the arithmetic is short.
type bucket struct {
	tokens    float64
	at        time.Time // when tokens was last brought up to date
	perMinute int       // the key's whole limit
	share     int       // replicas it is divided among
	lastSeen  time.Time
}

// capacity is this replica's part of the burst; perSecond its refill rate.
func (b *bucket) capacity() float64  { return float64(b.perMinute) / float64(b.share) }
func (b *bucket) perSecond() float64 { return b.capacity() / 60 }

// advance refills the bucket up to now.
func (b *bucket) advance(now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = math.Min(b.capacity(), b.tokens+d.Seconds()*b.perSecond())
		b.at = now
	}
}

// rateState is what the headers say after a take or a refund.
type rateState struct {
	ok                 bool
	perMinute          int
	remaining          int
	retryAfter, fullIn time.Duration
}

func newRateLimiter(perMinute int, share func() int) *rateLimiter {
	return &rateLimiter{defaultPerMinute: perMinute, share: share, buckets: map[uuid.UUID]*bucket{}, lastSweep: time.Now()}
}

func (r *rateLimiter) replicas() int {
	if r.share == nil {
		return 1
	}
	return max(1, r.share())
}

// take spends one token of key's bucket and reports its state.
func (r *rateLimiter) take(key uuid.UUID, perMinute int, now time.Time) rateState {
	if perMinute <= 0 {
		perMinute = r.defaultPerMinute
	}
	n := r.replicas()
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[key]
	switch {
	case b == nil || b.perMinute != perMinute:
		b = &bucket{perMinute: perMinute, share: n, at: now}
		b.tokens = b.capacity()
		r.buckets[key] = b
	case b.share != n:
		// Tokens earned at the old share stay earned; a replica joining
		// shrinks the part this one may hold, one leaving lets it refill more.
		b.advance(now)
		b.share = n
		b.tokens = math.Min(b.tokens, b.capacity())
	}
	b.advance(now)
	b.lastSeen = now
	ok := b.tokens >= 1
	if ok {
		b.tokens--
	}
	if now.Sub(r.lastSweep) > 10*time.Minute {
		r.sweep(now)
	}
	return b.state(ok)
}

// refund gives back the token a request took, for an answer that should cost
// nothing; never beyond the bucket's capacity.
func (r *rateLimiter) refund(key uuid.UUID, now time.Time) (rateState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[key]
	if b == nil {
		return rateState{}, false
	}
	b.advance(now)
	b.tokens = math.Min(b.capacity(), b.tokens+1)
	return b.state(true), true
}

// state reads the bucket as the whole budget: the whole tokens of this
// replica's part times the replicas, which is what a balancer spreading the
// key's requests leaves. Whole tokens, so that Remaining is 0 exactly when
// the next request here would be refused.
func (b *bucket) state(ok bool) rateState {
	s := rateState{ok: ok, perMinute: b.perMinute}
	s.remaining = min(b.perMinute, int(math.Floor(b.tokens+1e-9))*b.share)
	if !ok {
		s.retryAfter = time.Duration((1 - b.tokens) / b.perSecond() * float64(time.Second))
	}
	s.fullIn = time.Duration((b.capacity() - b.tokens) / b.perSecond() * float64(time.Second))
	return s
}

// sweep forgets buckets idle long enough to have refilled completely.
func (r *rateLimiter) sweep(now time.Time) {
	for k, b := range r.buckets {
		if now.Sub(b.lastSeen) > 2*time.Minute {
			delete(r.buckets, k)
		}
	}
	r.lastSweep = now
}

const localLimiter = "pmapi.limiter"

// limit is the middleware; it runs after the credential is known.
func (s *Server) limit(c *fiber.Ctx) error {
	p := principalOf(c)
	st := s.limiter.take(p.KeyID, p.RateLimitPerMinute, time.Now())
	setRateHeaders(c, st)
	if !st.ok {
		secs := max(1, int(math.Ceil(st.retryAfter.Seconds())))
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
		return pmapi.Errorf(pmapi.CodeRateLimited,
			"rate limit of %d requests per minute exceeded; retry after %d s", st.perMinute, secs).
			With("limit", st.perMinute).
			With("retryAfterSeconds", secs)
	}
	c.Locals(localLimiter, s.limiter)
	if err := s.admitMonth(c); err != nil {
		return err
	}
	return c.Next()
}

// RefundRate gives the request's token back to its credential's budget, for
// an answer that should not count against the rate limit (a 304 Not
// Modified), and corrects the headers already set. A request the limiter did
// not see (a console session, the admin API) is left as it is.
func RefundRate(c *fiber.Ctx) {
	r, ok := c.Locals(localLimiter).(*rateLimiter)
	if !ok {
		return
	}
	if st, ok := r.refund(principalOf(c).KeyID, time.Now()); ok {
		setRateHeaders(c, st)
	}
}

// setRateHeaders writes GitHub-style headers (Reset as a Unix time) and the
// IETF draft's RateLimit-Policy / RateLimit (quota, window, remaining,
// seconds to reset).
func setRateHeaders(c *fiber.Ctx, st rateState) {
	limit := strconv.Itoa(st.perMinute)
	c.Set("X-RateLimit-Limit", limit)
	c.Set("X-RateLimit-Remaining", strconv.Itoa(st.remaining))
	c.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(st.fullIn).Unix(), 10))
	c.Set("RateLimit-Policy", `"default";q=`+limit+`;w=60`)
	c.Set("RateLimit", `"default";r=`+strconv.Itoa(st.remaining)+`;t=`+strconv.Itoa(int(math.Ceil(st.fullIn.Seconds()))))
}
