package console

import (
	"github.com/gofiber/fiber/v2"
)

// csp lets pages load this origin's scripts, styles and images and nothing
// else: no inline script or style, no other origin, and no framing.
const csp = "default-src 'self'; frame-ancestors 'none'"

// secureHeaders marks every console answer: the policy, no MIME sniffing,
// no framing, no caching (pages show secrets once), no referrer to others.
func (cn *Console) secureHeaders(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", csp)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}
