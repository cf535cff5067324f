package ingest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/pipeline/promwrite"
)

// MaxPromWriteBody is the largest remote-write request after snappy decompression.
const MaxPromWriteBody = 32 << 20

// Remote-write 2.0 answer headers: what the request wrote.
const (
	headerSamplesWritten    = "X-Prometheus-Remote-Write-Samples-Written"
	headerHistogramsWritten = "X-Prometheus-Remote-Write-Histograms-Written"
	headerExemplarsWritten  = "X-Prometheus-Remote-Write-Exemplars-Written"
)

// PromWrite serves POST /prometheus/api/v1/write: Prometheus remote write 1.0 and 2.0
// into the Prometheus app's tables of the selected database (query/promstore), through
// the log like every insert, acknowledged (204) once the log holds the request. Status
// codes follow the remote-write specification: 400 for a request that can never be
// stored (senders drop it), 415 for a message type or encoding this receiver does not
// read, 5xx and 429 with Retry-After for what a retry can cure. A request's content is
// its idempotency key: a retried request lands once.
func (h *Handlers) PromWrite(ctx *fasthttp.RequestCtx, p Caller) error {
	msg, err := promwrite.Negotiate(string(ctx.Request.Header.ContentType()), string(ctx.Request.Header.Peek("Content-Encoding")))
	// A Content-Encoding given is exactly `snappy`, as senders write it and the document
	// says (an empty one is not taken for an absent one).
	for _, enc := range ctx.Request.Header.PeekAll("Content-Encoding") {
		if err == nil && string(enc) != "snappy" {
			err = fmt.Errorf("%w: Content-Encoding %q; remote write is snappy-compressed", promwrite.ErrUnsupportedMediaType, enc)
		}
	}
	if err != nil {
		return promWriteError(err)
	}
	if !p.CanInsert() {
		return apierr.Forbidden("write Prometheus series")
	}
	db, err := h.deps.Auth.Database(ctx, p)
	if err != nil {
		return err
	}
	release, err := h.ingestSlot()
	if err != nil {
		return err
	}
	defer release()
	b, err := promwrite.Decode(msg, ctx.PostBody(), MaxPromWriteBody)
	if err != nil {
		return promWriteError(err)
	}
	for _, sec := range b.Sections {
		if !h.deps.Auth.MayInsert(p, db.Name, sec.Table) {
			return apierr.New(403, "forbidden", "no role of this key holds INSERT on "+db.Name+"."+sec.Table,
				"GRANT INSERT ON "+db.Name+".* TO <role> with an admin key (remote write fills the prometheus_* tables)")
		}
	}
	if len(b.Sections) > 0 {
		err := h.accept(pipeline.Accepted{Cluster: p.Cluster(), Org: p.Org(), TableID: pipeline.PrometheusTableID(db.Engine),
			Database: db.Engine, Table: "prometheus", IdempotencyKey: "prw-" + hex.EncodeToString(b.Digest[:]),
			Rows: pipeline.EncodeSections(b.Sections), Format: pipeline.FormatPrometheus, Count: b.Rows()})
		if err != nil {
			return err
		}
	}
	rh := &ctx.Response.Header
	rh.Set(headerSamplesWritten, strconv.Itoa(b.Samples))
	rh.Set(headerHistogramsWritten, strconv.Itoa(b.Histograms))
	rh.Set(headerExemplarsWritten, strconv.Itoa(b.Exemplars))
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	return nil
}

// promWriteError maps a decoding error to its status.
func promWriteError(err error) error {
	hint := "nothing of this request was stored"
	switch {
	case errors.Is(err, promwrite.ErrUnsupportedMediaType):
		return &apierr.Error{Status: 415, Code: "unsupported_media_type", Message: err.Error(),
			Hint: "send snappy-compressed application/x-protobuf (proto=" + promwrite.V1 + " or " + promwrite.V2 + "); " + hint}
	case errors.Is(err, promwrite.ErrTooLarge):
		return &apierr.Error{Status: 413, Code: "request_too_large", Message: err.Error(), Hint: "lower queue_config.max_samples_per_send; " + hint}
	}
	return &apierr.Error{Status: 400, Code: "invalid_remote_write", Message: err.Error(), Hint: hint}
}
