package api

import (
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// admitMonth holds a key's or token's request to its workspace's
// requestsPerMonth quota (quota.MonthGuard: no database read per request).
// A refusal is 429 QUOTA_EXCEEDED with Retry-After at the next UTC month,
// when the quota renews; the request still spent its rate-limit token, as any
// answered request does.
func (s *Server) admitMonth(c *fiber.Ctx) error {
	if s.months == nil {
		return nil
	}
	shard, ws := Tenant(c)
	retryAfter, err := s.months.Admit(c.UserContext(), shard, ws)
	if retryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retryAfter))
	}
	return err
}
