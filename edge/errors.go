package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/tables"
)

// APIError is an error answered with the service's error envelope:
// {"error": {"code": "...", "message": "...", "hint": "..."}}.
type APIError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Field names the request field that was wrong, when one was.
	Field string `json:"field,omitempty"`
	// EngineCode is the engine's error code for errors the engine raised.
	EngineCode int32 `json:"engine_code,omitempty"`
	// RetryAfter, in seconds, is sent as the Retry-After header.
	RetryAfter int `json:"-"`
	// Internal is what went wrong inside the service, for the server log only: a 5xx
	// answer carrying it says so with a generic message and the request id (writeError).
	Internal error `json:"-"`
}

func (e *APIError) Error() string { return e.Message }

// apiErr builds an APIError.
func apiErr(status int, code, msg, hint string) *APIError {
	return &APIError{Status: status, Code: code, Message: msg, Hint: hint}
}

// requiredField is the error for a request body that lacks a required field.
func requiredField(code, field string) *APIError {
	return &APIError{Status: 400, Code: code, Field: field, Message: fmt.Sprintf("field %q is required", field)}
}

// internalErrorKey holds a 5xx answer's internal detail, which logged writes to the
// server log.
const internalErrorKey = "internal_error"

// protocolError is an error answered in a protocol's own envelope rather than the
// service's: OAuth's (oauthError) and Splunk HEC's (hecStatus).
type protocolError interface {
	error
	write(ctx *fasthttp.RequestCtx)
}

// writeError answers err: the one writer of a failed request's answer, called by respond
// for every handler (and by the router and the server for what reaches no handler).
func writeError(ctx *fasthttp.RequestCtx, err error) {
	var pe protocolError
	if errors.As(err, &pe) {
		pe.write(ctx)
		return
	}
	e := toAPIError(err)
	if public, detail := publicError(e); detail != "" {
		id, _ := ctx.UserValue(requestIDKey).(string)
		public.Message += "; it was logged as " + id
		ctx.SetUserValue(internalErrorKey, detail)
		e = public
	}
	ctx.SetUserValue(apiErrorKey, e)
	body, _ := json.Marshal(struct {
		Error *APIError `json:"error"`
	}{e})
	ctx.ResetBody()
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	if e.RetryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	ctx.SetBody(body)
}

// publicError is what a client (and the request log, which the organization reads) may see
// of e: a 5xx answer never carries internal error text (engine, log or event-store
// messages name internal databases, tables, hosts and files). A 500, or a 5xx with an
// Internal cause, keeps its status, code, hint and Retry-After and says only that the
// request failed inside the service; detail is the text for the server log ("" when e
// is public as it is).
func publicError(e *APIError) (public *APIError, detail string) {
	if e.Status < 500 || e.Status != 500 && e.Internal == nil {
		return e, ""
	}
	detail = e.Message
	if e.Internal != nil {
		detail = e.Internal.Error()
	}
	p := *e
	p.Internal = nil
	p.EngineCode = 0
	p.Message = "the request failed inside the service"
	if e.Status == 503 {
		p.Message = "a service the request needs is unavailable; retry it after the Retry-After delay"
	}
	return &p, detail
}

// toAPIError maps domain errors to statuses once, here.
func toAPIError(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	var qe *query.Error
	if errors.As(err, &qe) {
		return &APIError{Status: qe.Status, Code: qe.Code, Message: qe.Message, Hint: qe.Hint, EngineCode: qe.EngineCode, Field: qe.Field}
	}
	var fe *catalog.FieldError
	switch {
	case errors.As(err, &fe):
		return &APIError{Status: 400, Code: "invalid_" + codeWord(fe.Field), Message: fe.Message, Field: fe.Field}
	case errors.Is(err, catalog.ErrNotFound):
		return apiErr(404, "not_found", err.Error(), "")
	case errors.Is(err, tables.ErrStorageUnavailable):
		return &APIError{Status: 503, Code: "storage_unavailable", Message: err.Error(), RetryAfter: 30,
			Hint: "its bucket's endpoint does not answer; delete it again once it does (its ingestion meanwhile goes to dead letters: see the table's freshness)"}
	case errors.Is(err, catalog.ErrExists):
		return apiErr(409, "already_exists", err.Error(), "")
	case errors.Is(err, catalog.ErrConflict):
		return apiErr(409, "conflict", err.Error(), "")
	case errors.Is(err, catalog.ErrProtected):
		return apiErr(403, "protected", err.Error(), "")
	case errors.Is(err, catalog.ErrInvalid):
		return apiErr(400, "invalid_request", err.Error(), "")
	case errors.Is(err, pipeline.ErrOverloaded):
		return &APIError{Status: 503, Code: "ingest_unavailable", Message: err.Error(),
			Hint: "nothing of this request was stored; retry it after the Retry-After delay", RetryAfter: 1}
	case errors.Is(err, pipeline.ErrTooLarge):
		return apiErr(413, "request_too_large", err.Error(), "split the rows into several requests")
	}
	return &APIError{Status: 500, Code: "internal_error", Message: err.Error(), Internal: err}
}

// isJSONNull reports whether a request body is the JSON literal null.
func isJSONNull(body []byte) bool {
	return string(bytes.TrimSpace(body)) == "null"
}
