package edge

import (
	_ "embed"

	"github.com/valyala/fasthttp"
)

// openAPIDocument is the OpenAPI 3.1 description of this API. openapi_test.go keeps it
// honest: it validates the document, compares its operations with the routes NewServer
// registers, and checks answers of the handlers against its schemas.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPI serves GET /v1/openapi.json, without authentication.
func (s *Server) openAPI(ctx *fasthttp.RequestCtx) error {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "public, max-age=300")
	ctx.SetBody(openAPIDocument)
	return nil
}
