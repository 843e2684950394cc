package api

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/pmapi/pmapi"
)

// rateLimiter keeps one token bucket per credential (golang.org/x/time/rate):
// `limit` requests per minute, refilled continuously, with a burst of the whole
// minute's allowance. Buckets live in this process: with N instances behind a
// balancer a key gets up to N times the limit, which the README states.
type rateLimiter struct {
	defaultPerMinute int
	mu               sync.Mutex
	buckets          map[uuid.UUID]*bucket
	lastSweep        time.Time
}

type bucket struct {
	lim       *rate.Limiter
	perMinute int
	lastSeen  time.Time
}

func newRateLimiter(perMinute int) *rateLimiter {
	return &rateLimiter{defaultPerMinute: perMinute, buckets: map[uuid.UUID]*bucket{}, lastSweep: time.Now()}
}

// take spends one token for key and reports the state of its bucket.
func (r *rateLimiter) take(
	key uuid.UUID,
	perMinute int,
	now time.Time,
) (ok bool, remaining int, retryAfter, fullIn time.Duration) {
	if perMinute <= 0 {
		perMinute = r.defaultPerMinute
	}
	every := rate.Limit(float64(perMinute) / 60)
	r.mu.Lock()
	b := r.buckets[key]
	if b == nil || b.perMinute != perMinute {
		b = &bucket{lim: rate.NewLimiter(every, perMinute), perMinute: perMinute}
		r.buckets[key] = b
	}
	b.lastSeen = now
	ok = b.lim.AllowN(now, 1)
	tokens := b.lim.TokensAt(now)
	if now.Sub(r.lastSweep) > 10*time.Minute {
		r.sweep(now)
	}
	r.mu.Unlock()

	perSecond := float64(perMinute) / 60
	if !ok {
		retryAfter = time.Duration((1 - tokens) / perSecond * float64(time.Second))
	}
	fullIn = time.Duration((float64(perMinute) - tokens) / perSecond * float64(time.Second))
	return ok, int(math.Max(0, math.Floor(tokens))), retryAfter, fullIn
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

// limit is the middleware; it runs after the credential is known.
func (s *Server) limit(c *fiber.Ctx) error {
	p := principalOf(c)
	perMinute := p.RateLimitPerMinute
	if perMinute <= 0 {
		perMinute = s.limiter.defaultPerMinute
	}
	now := time.Now()
	ok, remaining, retryAfter, fullIn := s.limiter.take(p.KeyID, perMinute, now)
	reset := int(math.Ceil(fullIn.Seconds()))
	// GitHub-style headers (Reset as a Unix time) and the IETF draft's
	// RateLimit-Policy / RateLimit (quota, window, remaining, seconds to reset).
	c.Set("X-RateLimit-Limit", strconv.Itoa(perMinute))
	c.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	c.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(fullIn).Unix(), 10))
	c.Set("RateLimit-Policy", `"default";q=`+strconv.Itoa(perMinute)+`;w=60`)
	c.Set("RateLimit", `"default";r=`+strconv.Itoa(remaining)+`;t=`+strconv.Itoa(reset))
	if !ok {
		secs := int(math.Ceil(retryAfter.Seconds()))
		if secs < 1 {
			secs = 1
		}
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
		return pmapi.Errorf(pmapi.CodeRateLimited,
			"rate limit of %d requests per minute exceeded; retry after %d s", perMinute, secs).
			With("limit", perMinute).
			With("retryAfterSeconds", secs)
	}
	return c.Next()
}
