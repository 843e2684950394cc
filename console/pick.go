package console

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

// From a verified email to a session: the workspaces that invited the email
// (the directory of people), less the suspended ones and those where no such
// user is found on the shard; one is signed in at once, several are offered
// to choose from.

const cookiePick = "pmapi_pick"

// candidate is a workspace the person may sign in to, as its user.
type candidate struct {
	Workspace tenant.Workspace
	shard     *tenant.Shard
	user      authz.User
}

// candidates lists where email may sign in, and how many of its workspaces
// are suspended.
func (cn *Console) candidates(ctx context.Context, email string) ([]candidate, int, error) {
	ids, err := authz.WorkspacesOfEmail(ctx, cn.cfg.Directory, email)
	if err != nil {
		return nil, 0, err
	}
	var out []candidate
	suspended := 0
	for _, id := range ids {
		w, err := cn.cfg.Directory.Get(ctx, id)
		if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if w.Status == tenant.StatusSuspended {
			suspended++
			continue
		}
		shard, err := cn.cfg.Directory.ShardOf(w)
		if err != nil {
			return nil, 0, err
		}
		u, err := authz.FindUserByEmail(ctx, shard, w.ID, email)
		if pmapi.ErrorCode(err) == pmapi.CodeNotFound {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, candidate{Workspace: w, shard: shard, user: u})
	}
	return out, suspended, nil
}

// pickState is a verified email choosing its workspace.
type pickState struct {
	Email    string `json:"email"`
	ReturnTo string `json:"returnTo"`
}

// signInEmail signs in a verified email, or offers its workspaces.
func (cn *Console) signInEmail(c *fiber.Ctx, email, back string) error {
	cands, suspended, err := cn.candidates(c.UserContext(), email)
	if err != nil {
		return cn.fail(c, internalError(err))
	}
	switch {
	case len(cands) == 0 && suspended > 0:
		return cn.signInFailed(c, http.StatusForbidden, "Workspace suspended",
			"The workspace that invited "+email+" is suspended, so nobody can sign in to it. Ask the operator.")
	case len(cands) == 0:
		return cn.signInFailed(c, http.StatusForbidden, "Not invited",
			"No workspace has invited "+email+". Ask the operator of this pmapi to invite this address.")
	case len(cands) == 1:
		return cn.issue(c, cands[0], back)
	}
	key, err := cn.put(c.UserContext(), kindPick, pickState{Email: email, ReturnTo: back}, signInTTL)
	if err != nil {
		return cn.fail(c, internalError(err))
	}
	c.Cookie(&fiber.Cookie{Name: cookiePick, Value: key, Path: Prefix + "/pick", MaxAge: int(signInTTL.Seconds()),
		HTTPOnly: true, Secure: !cn.cfg.Dev, SameSite: fiber.CookieSameSiteLaxMode})
	return c.Redirect(Prefix+"/pick", http.StatusSeeOther)
}

// pickData is the choice page's content.
type pickData struct {
	Email      string
	Workspaces []tenant.Workspace
}

func (cn *Console) pickPage(c *fiber.Ctx) error { return cn.showPick(c, http.StatusOK, "") }

func (cn *Console) pick(c *fiber.Ctx) error {
	key := c.Cookies(cookiePick)
	if !cn.csrfValid(c, key) {
		return cn.signInFailed(c, http.StatusForbidden, "Form expired",
			"This form has expired or did not come from this console. Sign in again.")
	}
	chosen, err := uuid.Parse(c.FormValue("workspace"))
	if err != nil {
		return cn.showPick(c, http.StatusBadRequest, "Choose one of the workspaces.")
	}
	var st pickState
	if err := cn.take(c.UserContext(), kindPick, key, &st); err != nil {
		return cn.pickExpired(c, err)
	}
	cands, _, err := cn.candidates(c.UserContext(), st.Email)
	if err != nil {
		return cn.fail(c, internalError(err))
	}
	for _, cd := range cands {
		if cd.Workspace.ID == chosen {
			c.Cookie(&fiber.Cookie{Name: cookiePick, Value: "", Path: Prefix + "/pick", Expires: time.Unix(0, 0),
				HTTPOnly: true, Secure: !cn.cfg.Dev, SameSite: fiber.CookieSameSiteLaxMode})
			return cn.issue(c, cd, st.ReturnTo)
		}
	}
	return cn.signInFailed(c, http.StatusForbidden, "Not invited",
		"That workspace has not invited "+st.Email+" (or is suspended). Sign in again and choose another.")
}

// showPick shows the choice, with a message when msg is not empty.
func (cn *Console) showPick(c *fiber.Ctx, status int, msg string) error {
	key := c.Cookies(cookiePick)
	var st pickState
	if err := cn.peek(c.UserContext(), kindPick, key, &st); err != nil {
		return cn.pickExpired(c, err)
	}
	cands, _, err := cn.candidates(c.UserContext(), st.Email)
	if err != nil {
		return cn.fail(c, internalError(err))
	}
	d := pickData{Email: st.Email}
	for _, cd := range cands {
		d.Workspaces = append(d.Workspaces, cd.Workspace)
	}
	return cn.render(c, status, "pick", view{Title: "Choose a workspace", Error: msg, CSRF: cn.csrfToken(key), Data: d})
}

func (cn *Console) pickExpired(c *fiber.Ctx, err error) error {
	if !errors.Is(err, errSpent) {
		return cn.fail(c, internalError(err))
	}
	return cn.signInFailed(c, http.StatusBadRequest, "Sign-in expired",
		"This choice was made already or has expired. Sign in again.")
}

// issue signs the browser in to cd's workspace: a new session (the one the
// browser had is ended first), both cookies, then back where it was going.
func (cn *Console) issue(c *fiber.Ctx, cd candidate, back string) error {
	if old := (creds{sid: c.Cookies(cookieSession), clientID: c.Cookies(cookieClient)}); old.sid != "" &&
		old.clientID != "" {
		_ = cn.call(c, old, http.MethodDelete, "/openapi/v1/session", nil, nil)
	}
	// The person signing in is the actor of their new session.
	ctx := audit.WithOrigin(c.UserContext(), audit.Origin{
		Actor: audit.Actor{Type: audit.ActorUser, ID: cd.user.ID.String()}, IP: c.IP(), RequestID: requestID(c),
	})
	sid, sess, err := authz.IssueSession(ctx, cd.shard, cd.Workspace.ID, cd.user.ID, cn.cfg.SessionTTL)
	if err != nil {
		return cn.fail(c, internalError(err))
	}
	cn.setSession(c, sid, cd.Workspace.ConsoleClientID, sess.ExpiresAt)
	cn.cfg.Log.Info("console sign-in", "workspaceId", cd.Workspace.ID.String(), "userId", cd.user.ID.String())
	if back == "" {
		back = Prefix + "/apps"
	}
	return c.Redirect(back, http.StatusSeeOther)
}
