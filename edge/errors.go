package edge

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
)

// APIError is an error answered with the service's error envelope (edge/apierr, which
// the edge's packages share).
type APIError = apierr.Error

// apiErr builds an APIError.
func apiErr(status int, code, msg, hint string) *APIError { return apierr.New(status, code, msg, hint) }

// requiredField is the error for a request body that lacks a required field.
func requiredField(code, field string) *APIError { return apierr.Required(code, field) }

// internalErrorKey holds a 5xx answer's internal detail, which logged writes to the
// server log.
const internalErrorKey = apierr.InternalErrorKey

// writeError answers err (apierr.Write): the one writer of a failed request's answer,
// called by respond for every handler (and by the router and the server for what
// reaches no handler).
func writeError(ctx *fasthttp.RequestCtx, err error) { apierr.Write(ctx, err) }

// publicError is what a client may see of e, and the detail for the server log
// (apierr.Public).
func publicError(e *APIError) (*APIError, string) { return apierr.Public(e) }

// toAPIError maps domain errors to statuses (apierr.From).
func toAPIError(err error) *APIError { return apierr.From(err) }

// codeWord turns a field path into the words of an error code (apierr.CodeWord).
func codeWord(field string) string { return apierr.CodeWord(field) }

// isJSONNull reports whether a request body is the JSON literal null.
func isJSONNull(body []byte) bool {
	return string(bytes.TrimSpace(body)) == "null"
}
