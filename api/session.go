package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// SessionView answers "who am I" for a console session.
type SessionView struct {
	User      UserView      `json:"user"`
	Workspace WorkspaceView `json:"workspace"`
}

func (s *Server) sessionOperations() []Operation {
	return []Operation{{
		Method: http.MethodGet, Path: "/openapi/v1/session", ID: "getSession", Tag: "Session",
		Summary: "The signed-in console user and their workspace", Auth: AuthSession,
		Result: SessionView{}, Status: http.StatusOK,
		Handler: func(c *fiber.Ctx) error {
			return respond(c, http.StatusOK, SessionView{User: userView(userOf(c)), Workspace: workspaceView(resolutionOf(c).Workspace)})
		},
	}}
}
