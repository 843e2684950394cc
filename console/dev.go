package console

import (
	"net/http"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// pmapi dev signs its demo user in without an identity provider, through a
// link that works once: DevSignInLink makes one (the banner prints it), and
// using it makes the next, which the log prints. The route exists only when
// Config.Dev is set, which only pmapi dev does.

type devUser struct{ workspace, user uuid.UUID }

type devLinks struct {
	mu     sync.Mutex
	tokens map[string]devUser
	base   string
}

func newDevLinks() *devLinks { return &devLinks{tokens: map[string]devUser{}} }

// DevSignInLink returns a one-time link under base (the server's URL) that
// signs user of workspace in; empty outside pmapi dev.
func (cn *Console) DevSignInLink(base string, workspace, user uuid.UUID) string {
	if cn.dev == nil {
		return ""
	}
	token := pmapi.RandomBase62(32)
	cn.dev.mu.Lock()
	defer cn.dev.mu.Unlock()
	cn.dev.tokens[token] = devUser{workspace: workspace, user: user}
	cn.dev.base = base
	return base + Prefix + "/dev/signin/" + token
}

func (cn *Console) devSignIn(c *fiber.Ctx) error {
	cn.dev.mu.Lock()
	who, ok := cn.dev.tokens[c.Params("token")]
	delete(cn.dev.tokens, c.Params("token"))
	base := cn.dev.base
	cn.dev.mu.Unlock()
	if !ok {
		return cn.signInFailed(c, http.StatusNotFound, "Link used",
			"This sign-in link was used already (each works once) or is not one pmapi dev printed. "+
				"Its log prints a new one after each use; restarting pmapi dev prints one too.")
	}
	ctx := c.UserContext()
	w, err := cn.cfg.Directory.Get(ctx, who.workspace)
	if err != nil {
		return cn.fail(c, internalError(err))
	}
	shard, err := cn.cfg.Directory.ShardOf(w)
	if err != nil {
		return cn.fail(c, internalError(err))
	}
	if w.Status == tenant.StatusSuspended {
		return cn.signInFailed(c, http.StatusForbidden, "Workspace suspended", "The demo workspace is suspended.")
	}
	cd := candidate{Workspace: w, shard: shard}
	cd.user.ID = who.user
	next := cn.DevSignInLink(base, who.workspace, who.user)
	cn.cfg.Log.Info("pmapi dev: the console sign-in link was used; the next one", "link", next)
	return cn.issue(c, cd, Prefix+"/apps")
}
