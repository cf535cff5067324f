// Package apierr is the service's error envelope, below the edge's packages that answer
// HTTP requests (edge, edge/ingest): the error type handlers return, the one mapping of
// domain errors to statuses, and the one writer of a failed request's answer.
package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/es"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/tables"
)

// Keys of the request context's user values the envelope reads and sets.
const (
	// RequestIDKey holds the request's id (set by the edge's request logger).
	RequestIDKey = "request_id"
	// ErrorKey holds the *Error a failed request was answered with (for the request log).
	ErrorKey = "api_error"
	// InternalErrorKey holds a 5xx answer's internal detail, which the edge's request
	// logger writes to the server log.
	InternalErrorKey = "internal_error"
)

// Error is an error answered with the service's error envelope:
// {"error": {"code": "...", "message": "...", "hint": "..."}}.
type Error struct {
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
	// answer carrying it says so with a generic message and the request id (Write).
	Internal error `json:"-"`
}

func (e *Error) Error() string { return e.Message }

// New builds an Error.
func New(status int, code, msg, hint string) *Error {
	return &Error{Status: status, Code: code, Message: msg, Hint: hint}
}

// Required is the error for a request body that lacks a required field.
func Required(code, field string) *Error {
	return &Error{Status: 400, Code: code, Field: field, Message: fmt.Sprintf("field %q is required", field)}
}

// Forbidden is the 403 for credentials that may not do what.
func Forbidden(what string) *Error {
	return New(403, "forbidden", "these credentials may not "+what, "use credentials with the needed permission")
}

// ProtocolError is an error answered in a protocol's own envelope rather than the
// service's: OAuth's, Splunk HEC's, Firehose's.
type ProtocolError interface {
	error
	WriteAnswer(ctx *fasthttp.RequestCtx)
}

// Write answers err: the one writer of a failed request's answer, called by the edge's
// respond for every handler (and by the router and the server for what reaches no
// handler).
func Write(ctx *fasthttp.RequestCtx, err error) {
	var pe ProtocolError
	if errors.As(err, &pe) {
		pe.WriteAnswer(ctx)
		return
	}
	e := Answer(ctx, err)
	body, _ := json.Marshal(struct {
		Error *Error `json:"error"`
	}{e})
	ctx.ResetBody()
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	if e.RetryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	ctx.SetBody(body)
}

// Answer is err as the request answers it, recorded for the request log: a 5xx carries
// a generic message and the request id, its detail kept for the server log (Public).
// Write and every protocol's own envelope (ProtocolError) answer through it.
func Answer(ctx *fasthttp.RequestCtx, err error) *Error {
	e := From(err)
	if public, detail := Public(e); detail != "" {
		id, _ := ctx.UserValue(RequestIDKey).(string)
		public.Message += "; it was logged as " + id
		ctx.SetUserValue(InternalErrorKey, detail)
		e = public
	}
	ctx.SetUserValue(ErrorKey, e)
	return e
}

// Public is what a client (and the request log, which the organization reads) may see
// of e: a 5xx answer never carries internal error text (engine, log or event-store
// messages name internal databases, tables, hosts and files). A 500, or a 5xx with an
// Internal cause, keeps its status, code, hint and Retry-After and says only that the
// request failed inside the service; detail is the text for the server log ("" when e
// is public as it is).
func Public(e *Error) (public *Error, detail string) {
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

// From maps domain errors to statuses once, here.
func From(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var qe *query.Error
	if errors.As(err, &qe) {
		return &Error{Status: qe.Status, Code: qe.Code, Message: qe.Message, Hint: qe.Hint, EngineCode: qe.EngineCode, Field: qe.Field}
	}
	var fe *catalog.FieldError
	switch {
	case errors.As(err, &fe):
		return &Error{Status: 400, Code: "invalid_" + CodeWord(fe.Field), Message: fe.Message, Field: fe.Field}
	case errors.Is(err, catalog.ErrNotFound):
		return New(404, "not_found", err.Error(), "")
	case errors.Is(err, tables.ErrStorageUnavailable):
		return &Error{Status: 503, Code: "storage_unavailable", Message: err.Error(), RetryAfter: 30,
			Hint: "its bucket's endpoint does not answer; delete it again once it does (its ingestion meanwhile goes to dead letters: see the table's freshness)"}
	case errors.Is(err, catalog.ErrExists):
		return New(409, "already_exists", err.Error(), "")
	case errors.Is(err, catalog.ErrConflict):
		return New(409, "conflict", err.Error(), "")
	case errors.Is(err, catalog.ErrProtected):
		return New(403, "protected", err.Error(), "")
	case errors.Is(err, catalog.ErrInvalid):
		return New(400, "invalid_request", err.Error(), "")
	case errors.Is(err, es.ErrUnavailable):
		// The control plane's store did not answer (down, or this node cut off from it):
		// the change was not acknowledged, though its append may have been committed.
		return &Error{Status: 503, Code: "event_store_unavailable", Message: "the event store does not answer", RetryAfter: 5,
			Internal: err, Hint: "retry after the Retry-After delay; the change may have been made meanwhile (a create retried then answers 409)"}
	case errors.Is(err, pipeline.ErrOverloaded):
		// The log was handed the rows and did not acknowledge them in time: they may still
		// be written (a partitioned node's records once its link is back), so the answer
		// must not say that nothing was stored.
		return &Error{Status: 503, Code: "ingest_unavailable", Message: err.Error(), RetryAfter: 1,
			Hint: "the rows may still be stored; retry after the Retry-After delay with the same Idempotency-Key, which stores them once"}
	case errors.Is(err, pipeline.ErrTooLarge):
		return New(413, "request_too_large", err.Error(), "split the rows into several requests")
	}
	return &Error{Status: 500, Code: "internal_error", Message: err.Error(), Internal: err}
}

// CodeWord turns a field path (`query.database`, `sinks[0].settings.url`, or a member name
// the request made up) into the words of an error code, which the document allows only
// as lowercase letters, digits and underscores (`query_database`): every other run of
// characters becomes one underscore.
func CodeWord(field string) string {
	var b strings.Builder
	gap := false
	for _, c := range strings.ToLower(field) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c)
			gap = false
		} else {
			gap = true
		}
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}
