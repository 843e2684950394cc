package api

import (
	"bytes"
	"compress/gzip"
	"embed"
	"html/template"
	"net/http"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
)

// The API reference at /docs: Redoc's standalone bundle, embedded, renders the
// document this server serves. Nothing is fetched from elsewhere, so it works
// offline and behind firewalls; README.md (Dependencies) says where the bundle
// comes from and `make reference` refreshes it from the npm registry.

// RedocVersion is the embedded bundle's release of the redoc npm package.
const RedocVersion = "2.5.4"

//go:embed reference/index.html reference/reference.js reference/redoc.standalone.js
var referenceFiles embed.FS

// The bundle's name carries its version, so browsers may keep it for good.
var redocBundle = "redoc-" + RedocVersion + ".standalone.js"

// referenceCSP lets the page run the two scripts from this origin and nothing
// else: no inline or evaluated script, no other origin. Redoc writes its styles
// at run time (styled-components, with no nonce support), hence inline styles;
// its search index runs in a Worker made from a blob.
const referenceCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

var referencePage = func() []byte {
	raw, _ := referenceFiles.ReadFile("reference/index.html")
	var b bytes.Buffer
	template.Must(template.New("reference").Parse(string(raw))).Execute(&b, struct{ Bundle string }{redocBundle})
	return b.Bytes()
}()

// asset is one script of the page, with its gzip form made on first use.
type asset struct {
	path, cache string
	once        sync.Once
	raw, gz     []byte
}

func (a *asset) load() {
	a.raw, _ = referenceFiles.ReadFile(a.path)
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = w.Write(a.raw)
	_ = w.Close()
	a.gz = b.Bytes()
}

var referenceAssets = map[string]*asset{
	redocBundle:    {path: "reference/redoc.standalone.js", cache: "public, max-age=31536000, immutable"},
	"reference.js": {path: "reference/reference.js", cache: "public, max-age=300"},
}

func (s *Server) referenceOperations() []Operation {
	return []Operation{
		{
			Method: http.MethodGet, Path: "/docs", ID: "getReference", Tag: "Meta", Raw: true, HTML: true,
			Summary: "This API's reference, rendered in the browser from the document",
			Description: "An HTML page that renders /openapi/v1/openapi.json with Redoc " + RedocVersion +
				", served from this binary (no CDN).",
			Status: http.StatusOK, Handler: serveReference,
		},
		{
			Method: http.MethodGet, Path: "/docs/{file}", ID: "getReferenceScript", Tag: "Meta", Raw: true,
			Summary: "A script of the reference page (the Redoc bundle and its start-up)",
			Status:  http.StatusOK, Handler: serveReferenceScript,
		},
	}
}

func serveReference(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("Content-Security-Policy", referenceCSP)
	c.Set("X-Frame-Options", "DENY")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "no-referrer")
	return c.Send(referencePage)
}

func serveReferenceScript(c *fiber.Ctx) error {
	a := referenceAssets[c.Params("file")]
	if a == nil {
		return pmapi.Errorf(pmapi.CodeNotFound, "no such file")
	}
	a.once.Do(a.load)
	c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, a.cache)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	if strings.Contains(c.Get(fiber.HeaderAcceptEncoding), "gzip") {
		c.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(a.gz)
	}
	return c.Send(a.raw)
}
