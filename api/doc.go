// Package api is the HTTP face of pmapi: the Fiber app, its middleware (request
// id, recovery, body limit, access log, credentials), the success envelope and the
// error table, and the OpenAPI document.
//
// Every route is declared once as an Operation (method, path, auth, scope, typed
// request and response). The router and the OpenAPI document are both built from
// that one list, and a test holds them equal.
package api
