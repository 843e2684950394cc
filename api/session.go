package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/authz"
)

// SessionView answers "who am I" for a console session.
type SessionView struct {
	User      UserView      `json:"user"`
	Workspace WorkspaceView `json:"workspace"`
}

// SessionEnded answers sign-out.
type SessionEnded struct {
	Ended bool `json:"ended" doc:"Always true: the sid stops working at once, on every instance"`
}

func (s *Server) sessionOperations() []Operation {
	return []Operation{{
		Method: http.MethodGet, Path: "/openapi/v1/session", ID: "getSession", Tag: "Session",
		Summary: "The signed-in console user and their workspace", Auth: AuthSession,
		Result: SessionView{}, Status: http.StatusOK,
		Handler: func(c *fiber.Ctx) error {
			return respond(
				c,
				http.StatusOK,
				SessionView{User: userView(userOf(c)), Workspace: workspaceView(resolutionOf(c).Workspace)},
			)
		},
	}, {
		Method: http.MethodDelete, Path: "/openapi/v1/session", ID: "endSession", Tag: "Session",
		Summary: "Sign out: end the calling session (the sid cookie's) on the server", Auth: AuthSession,
		Result: SessionEnded{}, Status: http.StatusOK,
		Handler: func(c *fiber.Ctx) error {
			res := resolutionOf(c)
			if err := authz.EndSession(c.UserContext(), res.Shard, res.Workspace.ID, c.Cookies(cookieSession)); err != nil {
				return err
			}
			return respond(c, http.StatusOK, SessionEnded{Ended: true})
		},
	}}
}
