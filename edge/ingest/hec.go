package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/pipeline/hec"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/tables"
)

// HTTP Event Collector compatibility: the endpoints and bodies of Splunk's HEC, so
// existing forwarders, logging libraries and agents send to the log-search app's
// logsearch_events table through the normal pipeline.
//
//	POST /services/collector/event   one or more concatenated JSON events
//	POST /services/collector/raw     raw text, one event per line
//	GET  /services/collector/health
//
// The token is an API key, as "Authorization: Splunk <key>" or "Bearer <key>".

// The log-search table's schema lives in query/tables.
const (
	LogsearchTable      = tables.LogSearchTable
	LogsearchColumnType = tables.LogSearchColumnType
)

type hecStatus struct {
	status int
	text   string
	code   int
	// invalid is the 0-based number of the event that was wrong, for code 6.
	invalid *int
	// hint, when set, is answered beside text and code.
	hint string
	// retryAfter, in seconds, is sent as the Retry-After header.
	retryAfter int
	// cause, on a failure inside the service, is the error behind it: recorded for the
	// request and server logs (apierr.Answer), never answered.
	cause error
}

// hecStatus is an error answered in HEC's own envelope (apierr.Write).
func (h *hecStatus) Error() string { return h.text }

var (
	hecTokenRequired = &hecStatus{status: 401, text: "Token is required", code: 2}
	hecInvalidToken  = &hecStatus{status: 403, text: "Invalid token", code: 4}
	hecNoData        = &hecStatus{status: 400, text: "No data", code: 5}
	hecBusy          = &hecStatus{status: 503, text: "Server is busy", code: 9}
)

func (st *hecStatus) WriteAnswer(ctx *fasthttp.RequestCtx) {
	if st.cause != nil {
		apierr.Answer(ctx, st.cause)
	}
	body := map[string]any{"text": st.text, "code": st.code}
	if st.invalid != nil {
		body["invalid-event-number"] = *st.invalid
	}
	if st.hint != "" {
		body["hint"] = st.hint
	}
	if st.retryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(st.retryAfter))
	}
	writeJSON(ctx, st.status, body)
}

// HECHealth serves GET /services/collector/health.
func (h *Handlers) HECHealth(ctx *fasthttp.RequestCtx) error {
	writeJSON(ctx, 200, map[string]any{"text": "HEC is healthy", "code": 17})
	return nil
}

// hecPrincipal authenticates an HEC request.
func (h *Handlers) hecPrincipal(ctx *fasthttp.RequestCtx) (Caller, *hecStatus) {
	a := ctx.Request.Header.Peek("Authorization")
	var token []byte
	if len(a) > len("splunk ") && bytes.EqualFold(a[:len("splunk ")], []byte("splunk ")) {
		token = bytes.TrimSpace(a[len("splunk "):])
	} else {
		token = h.deps.Auth.Bearer(a)
	}
	if len(token) == 0 {
		return nil, hecTokenRequired
	}
	p, err := h.deps.Auth.Token(ctx, string(token))
	if err != nil {
		return nil, hecInvalidToken
	}
	return p, nil
}

// hecEvent is one event of /services/collector/event.
type hecEvent struct {
	Time       json.RawMessage            `json:"time"`
	Host       *string                    `json:"host"`
	Source     *string                    `json:"source"`
	Sourcetype *string                    `json:"sourcetype"`
	Index      *string                    `json:"index"`
	Event      json.RawMessage            `json:"event"`
	Fields     map[string]json.RawMessage `json:"fields"`
}

// meta holds request-level defaults (query parameters of the raw endpoint).
type hecMeta struct {
	host, source, sourcetype, index string
}

func hecDefaults(ctx *fasthttp.RequestCtx) hecMeta {
	m := hecMeta{host: string(ctx.QueryArgs().Peek("host")), source: string(ctx.QueryArgs().Peek("source")),
		sourcetype: string(ctx.QueryArgs().Peek("sourcetype")), index: string(ctx.QueryArgs().Peek("index"))}
	if m.host == "" {
		m.host = string(ctx.RemoteIP().String())
	}
	if m.source == "" {
		m.source = "http:hec"
	}
	if m.index == "" {
		m.index = "main"
	}
	return m
}

// parseTime reads HEC's time: epoch seconds as a number or a string, fractions allowed.
func parseTime(raw json.RawMessage, now time.Time) (time.Time, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return now, nil
	}
	text := strings.Trim(string(raw), `"`)
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) {
		return time.Time{}, fmt.Errorf("time %s is not epoch seconds", raw)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e3))*1e6), nil
}

// builtin fields keep their meaning; an event's own fields of these names are dropped.
var builtin = map[string]bool{"_time": true, "_raw": true, "host": true, "source": true, "sourcetype": true, "index": true}

// appendRow appends one logsearch row: built-in fields, the indexed fields, and the
// members of a JSON object event (as Splunk extracts them for JSON events).
func appendRow(dst *rows.Buffer, t time.Time, raw string, m hecMeta, fields map[string]json.RawMessage, object map[string]json.RawMessage) error {
	row := map[string]any{
		"_time": t.UTC().Format("2006-01-02 15:04:05.000"), "_raw": raw, "host": m.host, "source": m.source,
		"sourcetype": m.sourcetype, "index": m.index,
	}
	for k, v := range object {
		if !builtin[k] {
			row[k] = v
		}
	}
	for k, v := range fields {
		if !builtin[k] {
			row[k] = v
		}
	}
	b, err := json.Marshal(row)
	if err != nil {
		return err
	}
	dst.B = append(dst.B, b...)
	return dst.EndRow()
}

// HECEvents serves POST /services/collector/event: concatenated JSON events.
func (h *Handlers) HECEvents(ctx *fasthttp.RequestCtx) error {
	p, st := h.hecPrincipal(ctx)
	if st != nil {
		return st
	}
	defaults := hecDefaults(ctx)
	decode := func(body []byte, dst *rows.Buffer) error {
		plain, err := dst.Inflate(body, string(ctx.Request.Header.Peek("Content-Encoding")), 0)
		if err != nil {
			return err
		}
		return decodeHECEvents(plain, defaults, time.Now(), dst)
	}
	return h.hecIngest(ctx, p, decode)
}

// decodeHECEvents appends the rows of a /services/collector/event body (inflated): the fast
// path of pipeline/hec, and this reference decoder for whatever it does not take as it is.
// now is the time of events without one.
func decodeHECEvents(plain []byte, defaults hecMeta, now time.Time, dst *rows.Buffer) error {
	// The fast path writes the rows the reference would, without reflection or a map per
	// event; whatever it does not take as it is (errors above all) the reference decides.
	meta := hec.Meta{Host: defaults.host, Source: defaults.source, Sourcetype: defaults.sourcetype, Index: defaults.index}
	if ok, err := hec.AppendEvents(plain, meta, now, dst); ok || err != nil {
		return err
	}
	return referenceHECEvents(plain, defaults, now, dst)
}

// referenceHECEvents is the reference decoder of /services/collector/event bodies: it
// answers every error, and the fast path writes the rows it would
// (TestHECFastPathWritesTheReferenceRows).
func referenceHECEvents(plain []byte, defaults hecMeta, now time.Time, dst *rows.Buffer) error {
	dec := json.NewDecoder(bytes.NewReader(plain))
	n := 0
	for ; ; n++ {
		var ev hecEvent
		err := dec.Decode(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		bad := func(text string, code int) error {
			i := n
			return &hecStatus{status: 400, text: text, code: code, invalid: &i}
		}
		if err != nil {
			return bad("Invalid data format", 6)
		}
		if len(ev.Event) == 0 {
			return bad("Event field is required", 12)
		}
		t, err := parseTime(ev.Time, now)
		if err != nil {
			return bad("Invalid data format", 6)
		}
		m := defaults
		for _, f := range []struct {
			v   *string
			dst *string
		}{{ev.Host, &m.host}, {ev.Source, &m.source}, {ev.Sourcetype, &m.sourcetype}, {ev.Index, &m.index}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
		var raw string
		var object map[string]json.RawMessage
		switch ev.Event[0] {
		case '"':
			if err := json.Unmarshal(ev.Event, &raw); err != nil {
				return bad("Invalid data format", 6)
			}
			if strings.TrimSpace(raw) == "" {
				return bad("Event field cannot be blank", 13)
			}
		case '{':
			if err := json.Unmarshal(ev.Event, &object); err != nil {
				return bad("Invalid data format", 6)
			}
			raw = string(ev.Event)
		default:
			raw = string(ev.Event)
		}
		if err := appendRow(dst, t, raw, m, ev.Fields, object); err != nil {
			return err
		}
	}
	if n == 0 {
		return hecNoData
	}
	return nil
}

// HECRaw serves POST /services/collector/raw: raw text, one event per line.
func (h *Handlers) HECRaw(ctx *fasthttp.RequestCtx) error {
	p, st := h.hecPrincipal(ctx)
	if st != nil {
		return st
	}
	m := hecDefaults(ctx)
	decode := func(body []byte, dst *rows.Buffer) error {
		plain, err := dst.Inflate(body, string(ctx.Request.Header.Peek("Content-Encoding")), 0)
		if err != nil {
			return err
		}
		now := time.Now()
		n := 0
		for _, line := range strings.Split(string(plain), "\n") {
			line = strings.TrimRight(line, "\r")
			if strings.TrimSpace(line) == "" {
				continue
			}
			n++
			if err := appendRow(dst, now, line, m, nil, nil); err != nil {
				return err
			}
		}
		if n == 0 {
			return hecNoData
		}
		return nil
	}
	return h.hecIngest(ctx, p, decode)
}

// hecIngest writes decoded events to logsearch_events, creating the table on first use.
func (h *Handlers) hecIngest(ctx *fasthttp.RequestCtx, p Caller, decode decoder) error {
	// HEC belongs to the log-search app: without it, HEC's own "Token disabled" answer,
	// with the hint naming the request that installs the app.
	if err := h.deps.Auth.RequireApp(p, catalog.AppLogsearch); err != nil {
		return &hecStatus{status: 403, text: "Token disabled", code: 1, hint: apierr.From(err).Hint}
	}
	if !p.CanInsert() {
		return &hecStatus{status: 403, text: "Invalid token", code: 4}
	}
	db, err := h.deps.Auth.Database(ctx, p)
	if err != nil {
		return &hecStatus{status: 400, text: "Incorrect index", code: 7}
	}
	// The INSERT grant is checked before anything is created: a key that may not write
	// the table must not make it either.
	if !h.deps.Auth.MayInsert(p, db.Name, LogsearchTable) {
		return hecInvalidToken
	}
	if _, ok := h.deps.Catalog.Table(p.Cluster(), db.Name, LogsearchTable); !ok && p.CustomRole() {
		return hecInvalidToken // custom-role keys create no tables
	}
	if _, err := h.TableNamedForInsert(p, db, LogsearchTable, NewTable{tables.LogSearchSortingKey, LogsearchColumnType}); err != nil {
		return &hecStatus{status: 503, text: "Server is busy", code: 9}
	}
	ctx.SetUserValue("table", LogsearchTable)
	buf := NewRows()
	defer RecycleRows(buf)
	// HEC has no request id to deduplicate by (its channel names a client, not a request).
	_, err = h.ingest(ctx, p, "", buf, decode)
	if err != nil {
		return hecError(err)
	}
	writeJSON(ctx, 200, map[string]any{"text": "Success", "code": 0})
	return nil
}

// hecError is an ingest error as HEC answers it.
func hecError(err error) error {
	var hs *hecStatus
	if errors.As(err, &hs) {
		return hs
	}
	e := apierr.From(err)
	switch {
	case e.Status == 503:
		return &hecStatus{status: 503, text: "Server is busy", code: 9, retryAfter: 1}
	case e.Status == 403:
		return hecInvalidToken
	case e.Status == 413:
		return &hecStatus{status: 413, text: "Content length too large", code: 27}
	case e.Status >= 500:
		// Splunk's "Internal server error": the detail goes to the server log only.
		return &hecStatus{status: 500, text: "Internal server error", code: 8, cause: err}
	}
	return &hecStatus{status: 400, text: "Invalid data format: " + e.Message, code: 6}
}
