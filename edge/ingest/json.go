package ingest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform"
	"github.com/svc-data/svc/pipeline/transform/firehose"
	"github.com/svc-data/svc/projections/catalog"
)

// decoder fills buf with the rows of a request body.
type decoder func(body []byte, buf *rows.Buffer) error

// Insert serves POST /v1/tables/{table}: plain JSON rows, a transform of a known
// source format, a Firehose delivery, or a URL import.
func (h *Handlers) Insert(ctx *fasthttp.RequestCtx) error {
	args := ctx.QueryArgs()
	name := string(args.Peek("transform"))
	if name == "firehose" && !args.Has("url") {
		return h.firehoseDelivery(ctx)
	}
	p, err := h.deps.Auth.Authenticate(ctx)
	if err != nil {
		return err
	}
	if args.Has("url") {
		if args.Has("transform") {
			return apierr.New(400, "transform_with_url", "transforms are not supported with URL inserts",
				"import the URL without transform, or post the body with ?transform="+name)
		}
		return h.urlImport(ctx, p)
	}
	encoding := string(ctx.Request.Header.Peek("Content-Encoding"))
	decode := decoder(func(body []byte, buf *rows.Buffer) error {
		plain, err := buf.Inflate(body, encoding, 0)
		if err != nil {
			return err
		}
		return rows.DecodeJSON(plain, buf)
	})
	if args.Has("transform") {
		t, err := transform.Get(name)
		if err != nil {
			return &apierr.Error{Status: 400, Code: "unknown_transform", Field: "transform", Message: err.Error()}
		}
		contentType := string(ctx.Request.Header.ContentType())
		decode = func(body []byte, buf *rows.Buffer) error {
			return t.Decode(transform.Request{Body: body, ContentType: contentType, ContentEncoding: encoding}, buf)
		}
	}
	idem, err := IdempotencyHeader(ctx)
	if err != nil {
		return err
	}
	buf := NewRows()
	defer RecycleRows(buf)
	n, err := h.ingest(ctx, p, idem, buf, decode)
	if err != nil {
		return err
	}
	// OTLP exporters read the answer of an export as an OTLP response.
	if signal, ok := strings.CutPrefix(name, "otlp-"); ok {
		ctx.Response.Header.Set("X-Successful-Rows", strconv.Itoa(n))
		return writeOTLPSuccess(ctx, signal, string(ctx.Request.Header.ContentType()), buf)
	}
	writeJSON(ctx, 202, map[string]any{"successful_rows": n, "quarantined_rows": buf.Rejected})
	return nil
}

// ingest authorizes, decodes and writes one request's rows to the log, returning the
// number of rows the log acknowledged. Nothing is acknowledged unless everything is.
func (h *Handlers) ingest(ctx *fasthttp.RequestCtx, p Caller, idem string, buf *rows.Buffer, decode decoder) (int, error) {
	if !p.CanInsert() {
		return 0, apierr.Forbidden("insert rows")
	}
	db, err := h.deps.Auth.Database(ctx, p)
	if err != nil {
		return 0, err
	}
	t, err := h.tableForInsert(ctx, p, db)
	if err != nil {
		return 0, err
	}
	return h.IngestInto(p, db, t, idem, buf, func(buf *rows.Buffer) error { return decode(ctx.PostBody(), buf) })
}

// rowBuffers recycles the row buffers of ingest requests: a new buffer per request cost
// its allocation, zeroed, about a quarter of svcd's CPU in otlp-traces (svcbench ingest).
var rowBuffers = sync.Pool{New: func() any { return new(rows.Buffer) }}

// maxRecycledRows bounds the rows capacity kept for another request.
const maxRecycledRows = 8 << 20

// NewRows returns an empty row buffer for one request.
func NewRows() *rows.Buffer { return rowBuffers.Get().(*rows.Buffer) }

// RecycleRows returns b for another request once its request is answered. Only memory
// nothing else holds may come back: rows the log acknowledged (the producer is done with
// them), rows never handed to it, and not rows of a failed accept, which IngestInto
// drops from b.
func RecycleRows(b *rows.Buffer) {
	b.Recycle(maxRecycledRows)
	rowBuffers.Put(b)
}

// IngestInto checks a custom-role key's INSERT grant, decodes and writes rows into a
// table the caller resolved (the HTTP routes above, and OTLP/gRPC).
func (h *Handlers) IngestInto(p Caller, db *catalog.Database, t *catalog.Table, idem string, buf *rows.Buffer, decode func(*rows.Buffer) error) (int, error) {
	if !h.deps.Auth.MayInsert(p, db.Name, t.Name) {
		return 0, apierr.New(403, "forbidden", fmt.Sprintf("no role of this key holds INSERT on %s.%s", db.Name, t.Name),
			"GRANT INSERT ON "+db.Name+"."+t.Name+" TO <role> with an admin key")
	}
	if err := validIdempotencyKey(idem); err != nil {
		return 0, err
	}
	// The slot is taken before decoding: decoding costs the memory and CPU the bound
	// is there to limit.
	release, err := h.ingestSlot()
	if err != nil {
		return 0, err
	}
	defer release()
	buf.MaxBytes = pipeline.MaxRequestBytes
	if err := decode(buf); err != nil {
		return 0, DecodeError(err)
	}
	if buf.Rows == 0 {
		return 0, nil
	}
	err = h.accept(pipeline.Accepted{Cluster: p.Cluster(), Org: p.Org(), TableID: t.ID,
		Database: t.Engine, Table: t.Name, IdempotencyKey: idem, Rows: buf.B})
	if err != nil {
		// The log may still hold the rows (a produce that timed out here can complete
		// later), so their memory is never recycled (RecycleRows).
		buf.B = nil
		return 0, err
	}
	return buf.Rows, nil
}

// ingestSlot takes one of the slots bounding inserts in flight, waiting up to IngestWait;
// release gives it back. An insert holds its slot from before its body is decoded until
// the log acknowledged its rows: beyond the bound, clients are told to come back rather
// than piling up decoded rows here.
func (h *Handlers) ingestSlot() (release func(), err error) {
	select {
	case h.inflight <- struct{}{}:
		return func() { <-h.inflight }, nil
	case <-time.After(h.cfg.IngestWait):
		return nil, &apierr.Error{Status: 503, Code: "ingest_busy", RetryAfter: 1,
			Message: "too many inserts in flight; nothing of this request was stored",
			Hint:    "retry after the Retry-After delay, or send fewer, larger requests"}
	}
}

// accept writes accepted rows to the log, returning once it acknowledged them. The
// caller holds an ingest slot (ingestSlot).
func (h *Handlers) accept(a pipeline.Accepted) error {
	actx, cancel := context.WithTimeout(context.Background(), ackTimeout(h.cfg.IngestTimeout, len(a.Rows)))
	defer cancel()
	return h.deps.Ingest.Accept(actx, a)
}

// ackTimeout is how long a request of n bytes of rows waits for the log's acknowledgment:
// the configured wait, plus a second per MiB, so that a request near the 100 MiB limit
// (a multi-part transaction) is not refused on a busy broker for its size alone.
func ackTimeout(base time.Duration, n int) time.Duration {
	return base + time.Duration(n>>20)*time.Second
}

// DecodeError maps a decoder's error to the API's: 413 for size limits, 415 for content
// types and codings it does not read, 400 naming the problem for the rest.
func DecodeError(err error) error {
	var hs *hecStatus
	if errors.As(err, &hs) {
		return err
	}
	hint := "nothing of this request was stored"
	switch {
	case errors.Is(err, rows.ErrTooLarge):
		return &apierr.Error{Status: 413, Code: "request_too_large", Message: err.Error(), Hint: "split the rows into several requests; " + hint}
	case errors.Is(err, rows.ErrUnsupportedMediaType):
		return &apierr.Error{Status: 415, Code: "unsupported_media_type", Message: err.Error(), Hint: hint}
	}
	return &apierr.Error{Status: 400, Code: "invalid_rows", Message: err.Error(),
		Hint: "send one JSON object or an array of JSON objects (or the transform's format); " + hint}
}

// firehoseError is an error of a Firehose delivery, answered in the shape Firehose reads
// (apierr.Write): {requestId, timestamp, errorMessage}.
type firehoseError struct {
	requestID string
	err       error
}

func (e *firehoseError) Error() string { return e.err.Error() }
func (e *firehoseError) Unwrap() error { return e.err }

func (e *firehoseError) WriteAnswer(ctx *fasthttp.RequestCtx) {
	a := apierr.Answer(ctx, e.err)
	ctx.SetStatusCode(a.Status)
	ctx.SetContentType("application/json")
	if a.RetryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", fmt.Sprint(a.RetryAfter))
	}
	ctx.SetBody(firehose.AppendErrorResponse(nil, e.requestID, time.Now(), a.Message))
}

// firehoseDelivery serves Amazon Data Firehose HTTP endpoint deliveries
// (?transform=firehose). The key arrives in X-Cloud-Firehose-Access-Key (Firehose's own
// X-Amz-Firehose-Access-Key is accepted too), and every answer, success or error, has the
// shape Firehose reads: {requestId, timestamp[, errorMessage]}. The request id is the
// idempotency key, so a delivery Firehose retries lands once.
func (h *Handlers) firehoseDelivery(ctx *fasthttp.RequestCtx) error {
	requestID := string(ctx.Request.Header.Peek("X-Amz-Firehose-Request-Id"))
	encoding := string(ctx.Request.Header.Peek("Content-Encoding"))
	if requestID == "" && (encoding == "" || encoding == "identity") {
		// A plain body's own id answers even a refusal of the key: reading it costs no
		// decompression.
		if env, err := firehose.ParseEnvelope(ctx.PostBody()); env.RequestID != "" || err == nil {
			requestID = env.RequestID
		}
	}
	fail := func(err error) error { return &firehoseError{requestID: requestID, err: err} }
	// The key is checked before a compressed body is inflated: an unauthenticated request
	// costs no decompression. Firehose sends its request id as a header too, so even a
	// refusal of the key answers it; the body's id is used only where the header has none.
	token := ctx.Request.Header.Peek("X-Cloud-Firehose-Access-Key")
	if len(token) == 0 {
		token = ctx.Request.Header.Peek("X-Amz-Firehose-Access-Key")
	}
	if len(token) == 0 {
		token = h.deps.Auth.Bearer(ctx.Request.Header.Peek("Authorization"))
	}
	if len(token) == 0 {
		return fail(apierr.New(401, "unauthenticated", "missing access key: set the endpoint's access key to an API key", ""))
	}
	p, err := h.deps.Auth.Token(ctx, string(token))
	if err != nil {
		return fail(err)
	}
	buf := NewRows()
	defer RecycleRows(buf)
	body, inflateErr := buf.Inflate(ctx.PostBody(), encoding, 0)
	if inflateErr == nil && requestID == "" {
		if env, err := firehose.ParseEnvelope(body); env.RequestID != "" || err == nil {
			requestID = env.RequestID
		}
	}
	if inflateErr != nil {
		return fail(DecodeError(inflateErr))
	}
	var columns []string
	if c := ctx.QueryArgs().Peek("columns"); c != nil {
		if columns, err = firehose.ParseColumns(string(c)); err != nil {
			return fail(DecodeError(err))
		}
	} else if v, ok, err := firehose.CommonAttribute(ctx.Request.Header.Peek("X-Amz-Firehose-Common-Attributes"), "columns"); err != nil {
		return fail(DecodeError(err))
	} else if ok {
		if columns, err = firehose.ParseColumns(v); err != nil {
			return fail(DecodeError(err))
		}
	}
	idem := ""
	if requestID != "" {
		idem = "firehose:" + requestID
		if len(idem) > 128 {
			idem = idem[:128]
		}
	}
	decode := func(_ []byte, dst *rows.Buffer) error {
		_, err := firehose.Decode(body, columns, dst)
		return err
	}
	if _, err := h.ingest(ctx, p, idem, buf, decode); err != nil {
		return fail(err)
	}
	ctx.SetStatusCode(200)
	ctx.SetContentType("application/json")
	ctx.SetBody(firehose.AppendResponse(nil, requestID, time.Now()))
	return nil
}
