package console

import (
	"embed"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/pmapi/pmapi/tenant"
)

// Prefix is where the console is served.
const Prefix = "/console"

// Config is what the console needs from the server that mounts it.
type Config struct {
	// Directory finds the workspaces an email was invited to and their shards.
	Directory *tenant.Directory
	// SessionTTL is the lifetime of the sessions sign-in issues: the admin
	// route's (PMAPI_SESSION_TTL).
	SessionTTL time.Duration
	// OIDC is the identity provider; nil leaves sign-in off (a page says so).
	OIDC *OIDCConfig
	// PublicURL is the origin the console is reached under; the redirect URI
	// is PublicURL + /console/callback. Empty takes the request's (pmapi dev).
	PublicURL string
	// Dev is pmapi dev: cookies without Secure, and the one-time sign-in link.
	Dev bool
	// Key signs the CSRF tokens (HMAC-SHA256); every instance needs the same.
	Key []byte
	Log *slog.Logger
}

// OIDCConfig names the identity provider and pmapi's client there.
type OIDCConfig struct {
	Issuer, ClientID, ClientSecret string
	// HTTPClient reaches the provider; nil is http.DefaultClient.
	HTTPClient *http.Client
}

// Console serves /console on a Fiber app.
type Console struct {
	cfg     Config
	app     *fiber.App
	once    sync.Once
	handler fasthttp.RequestHandler
	oidc    *provider
	dev     *devLinks
}

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets/htmx.min.js assets/console.css assets/console.js assets/htmx.LICENSE assets/favicon.svg
var assetFiles embed.FS

// Mount adds the console's routes to app, the API's Fiber app, whose own
// routes the pages call in-process. Mount before the app serves.
func Mount(app *fiber.App, cfg Config) (*Console, error) {
	if cfg.Directory == nil {
		return nil, errors.New("console: a directory is required")
	}
	if len(cfg.Key) < 32 {
		return nil, errors.New("console: a key of at least 32 bytes is required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 30 * 24 * time.Hour
	}
	cn := &Console{cfg: cfg, app: app}
	if cfg.OIDC != nil {
		cn.oidc = newProvider(*cfg.OIDC)
	}
	if cfg.Dev {
		cn.dev = newDevLinks()
	}
	cn.routes()
	return cn, nil
}

func (cn *Console) routes() {
	r := cn.app.Group(Prefix, cn.secureHeaders)
	r.Get("/static/:file", serveAsset)
	r.Get("/login", cn.login)
	r.Get("/callback", cn.callback)
	r.Get("/pick", cn.pickPage)
	r.Post("/pick", cn.pick)
	r.Get("/logout", cn.logoutPage)
	r.Post("/logout", cn.logout)
	if cn.dev != nil {
		r.Get("/dev/signin/:token", cn.devSignIn)
	}
	r.Get(
		"/",
		cn.signedIn(func(c *fiber.Ctx, s *session) error { return c.Redirect(Prefix+"/apps", http.StatusSeeOther) }),
	)
	r.Get("/apps", cn.signedIn(cn.appsPage))
	r.Post("/apps", cn.signedIn(cn.withCSRF(cn.createApp)))
	r.Post("/apps/:clientId/status", cn.signedIn(cn.withCSRF(cn.setAppStatus)))
	r.Post("/apps/:clientId/delete", cn.signedIn(cn.withCSRF(cn.deleteApp)))
	r.Get("/apps/:clientId/keys", cn.signedIn(cn.keysPage))
	r.Post("/apps/:clientId/keys", cn.signedIn(cn.withCSRF(cn.createKey)))
	r.Post("/apps/:clientId/keys/:keyId/:action", cn.signedIn(cn.withCSRF(cn.keyAction)))
	r.Get("/apps/:clientId/webhooks", cn.signedIn(cn.webhooksPage))
	r.Post("/apps/:clientId/webhooks", cn.signedIn(cn.withCSRF(cn.createWebhook)))
	r.Post("/apps/:clientId/webhooks/:subId/:action", cn.signedIn(cn.withCSRF(cn.webhookAction)))
	r.Get("/apps/:clientId/deliveries", cn.signedIn(cn.deliveriesPage))
	r.Post("/apps/:clientId/deliveries/replay", cn.signedIn(cn.withCSRF(cn.replayMany)))
	r.Get("/apps/:clientId/deliveries/:deliveryId", cn.signedIn(cn.deliveryPage))
	r.Post("/apps/:clientId/deliveries/:deliveryId/replay", cn.signedIn(cn.withCSRF(cn.replayOne)))
	r.Get("/device", cn.signedIn(cn.devicePage))
	r.Get("/audit", cn.signedIn(cn.auditPage))
	r.Post("/device", cn.signedIn(cn.withCSRF(cn.decideDevice)))
	r.All("/*", func(c *fiber.Ctx) error {
		return cn.render(c, http.StatusNotFound, "message", view{Title: "Not found",
			Message: "There is no console page at this address.", Back: Prefix + "/apps"})
	})
}
