// Package pmapisdk is a Go client of pmapi's public API.
//
// Its client (client.gen.go) is generated with oapi-codegen from the OpenAPI
// document the server serves (make sdk; TestSDKIsFresh fails when it is
// stale): one method per operation (CreateTaskWithResponse, ListTasksWithResponse,
// ...), one type per schema (TaskView, TaskStatus, ErrorCode, ...).
// Around it, this package adds what the document cannot say:
//
//   - New: the client with an app's credentials (X-Client-ID and an API
//     key, or an OAuth token source);
//   - OAuthConfig: golang.org/x/oauth2's device flow against the server;
//   - Check: a failure as an *APIError carrying its ErrorCode;
//   - Verify: the webhook signature check, with several secrets during a
//     rotation.
//
// docs/sdk.md shows them in use.
package pmapisdk
