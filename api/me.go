package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
)

// CredentialView describes the credential a resource call was made with.
type CredentialView struct {
	ClientID    string   `json:"clientId"`
	WorkspaceID string   `json:"workspaceId" format:"uuid"`
	Type        string   `json:"type" enum:"api_key,oauth"`
	KeyID       *string  `json:"keyId" doc:"For API keys"`
	Scopes      []string `json:"scopes" doc:"Effective scopes: the credential's own, limited to its app's current ones"`
}

func (s *Server) meOperations() []Operation {
	return []Operation{{
		Method: http.MethodGet, Path: "/openapi/v1/me", ID: "getCredential", Tag: "API keys",
		Auth: AuthKey, ScopeInHandler: true,
		Summary: "The calling credential: app, workspace and effective scopes (needs no scope)",
		Result:  CredentialView{}, Status: http.StatusOK,
		Handler: func(c *fiber.Ctx) error {
			p := principalOf(c)
			v := CredentialView{
				ClientID:    p.ClientID,
				WorkspaceID: p.Workspace.ID.String(),
				Type:        p.Credential,
				Scopes:      p.Scopes.Names(),
			}
			if p.Credential == "api_key" {
				id := pmapi.FormatID(authz.KeyIDPrefix, p.KeyID)
				v.KeyID = &id
			}
			return respond(c, http.StatusOK, v)
		},
	}}
}
