package console

import (
	"mime"
	"net/http"
	"path"

	"github.com/gofiber/fiber/v2"
)

// HTMXVersion is the embedded htmx release (assets/htmx.min.js, from the
// htmx.org npm package; its licence is assets/htmx.LICENSE).
const HTMXVersion = "2.0.11"

// serveAsset answers the console's own scripts and style.
func serveAsset(c *fiber.Ctx) error {
	name := c.Params("file")
	switch name {
	case "htmx.min.js", "console.css", "console.js", "htmx.LICENSE", "favicon.svg":
	default:
		return c.Status(http.StatusNotFound).SendString("not found")
	}
	raw, err := assetFiles.ReadFile("assets/" + name)
	if err != nil {
		return c.Status(http.StatusNotFound).SendString("not found")
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = fiber.MIMETextPlainCharsetUTF8
	}
	c.Set(fiber.HeaderContentType, ctype)
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.Send(raw)
}
