package workflows

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/requestlog"
	"github.com/svc-data/svc/query/sqlquote"
)

// Run log event types.
const (
	// EventEvaluated: one per evaluation: status ok, error or canceled; matches (rows
	// the SQL returned); duration; lag behind the schedule for scheduled runs.
	EventEvaluated = "workflow.evaluated"
	// EventDelivered: one per sink per evaluation with rows: status ok or error,
	// attempts, rows delivered.
	EventDelivered = "workflow.delivered"
)

// logEntry is one run log entry as stored and as the API returns it.
type logEntry struct {
	ID         string    `json:"id"`
	Time       time.Time `json:"-"`
	TimeMS     int64     `json:"time_ms"`
	WorkflowID uuid.UUID `json:"workflow_id"`
	RunID      string    `json:"run_id"`
	EventType  string    `json:"event_type"`
	Revision   int       `json:"workflow_revision"`
	Source     string    `json:"source"`
	Status     string    `json:"status"`
	Matches    int       `json:"matches"`
	SinkID     string    `json:"sink_id,omitempty"`
	SinkType   string    `json:"sink_type,omitempty"`
	Attempts   int       `json:"attempts,omitempty"`
	DurationMS float64   `json:"duration_ms"`
	LagMS      *int64    `json:"schedule_lag_ms,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// LogSchema creates the run log's table in an engine. Entries are kept days days
// (SVC_WORKFLOW_LOG_DAYS, 30 by default; a table made with another retention gets this
// one); the deduplication window makes a re-run evaluation's log insert (same token) a
// no-op.
func LogSchema(ctx context.Context, e LogEngine, days int) error {
	ttl := fmt.Sprintf("toDateTime(ts) + toIntervalDay(%d)", days)
	if err := e.Exec(ctx, `CREATE TABLE IF NOT EXISTS _svc.workflow_log (
		id String, ts DateTime64(3, 'UTC'), workflow_id UUID, run_id String,
		event_type LowCardinality(String), workflow_revision UInt32, source LowCardinality(String),
		status LowCardinality(String), matches UInt64, sink_id String, sink_type LowCardinality(String),
		attempts UInt16, duration_ms Float64, schedule_lag_ms Nullable(Int64), error String
	) ENGINE = MergeTree ORDER BY (workflow_id, ts, id)
	TTL `+ttl+`
	SETTINGS non_replicated_deduplication_window = 100000`); err != nil {
		return err
	}
	return requestlog.EnsureTTL(ctx, e, "_svc", "workflow_log", ttl)
}

type storedEntry struct {
	ID         string  `json:"id"`
	TS         string  `json:"ts"`
	WorkflowID string  `json:"workflow_id"`
	RunID      string  `json:"run_id"`
	EventType  string  `json:"event_type"`
	Revision   int     `json:"workflow_revision"`
	Source     string  `json:"source"`
	Status     string  `json:"status"`
	Matches    int     `json:"matches"`
	SinkID     string  `json:"sink_id"`
	SinkType   string  `json:"sink_type"`
	Attempts   int     `json:"attempts"`
	DurationMS float64 `json:"duration_ms"`
	LagMS      *int64  `json:"schedule_lag_ms"`
	Error      string  `json:"error"`
}

// writeLog records an evaluation's entries once per run (the token is the run's).
func (s *Service) writeLog(ctx context.Context, w *catalog.Workflow, runID string, entries []logEntry) error {
	e, err := s.logs.Engine(w.ClusterID)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO _svc.workflow_log SETTINGS insert_deduplication_token = %s FORMAT JSONEachRow\n",
		sqlquote.String("wflog/"+runID))
	for i, en := range entries {
		row, _ := json.Marshal(storedEntry{ID: runID + "/" + strconv.Itoa(i), TS: en.Time.UTC().Format("2006-01-02 15:04:05.000"), WorkflowID: en.WorkflowID.String(),
			RunID: en.RunID, EventType: en.EventType, Revision: en.Revision, Source: en.Source, Status: en.Status,
			Matches: en.Matches, SinkID: en.SinkID, SinkType: en.SinkType, Attempts: en.Attempts, DurationMS: en.DurationMS,
			LagMS: en.LagMS, Error: en.Error})
		b.Write(row)
		b.WriteByte('\n')
	}
	return e.Exec(ctx, b.String())
}

// Window limits of logs and metrics.
const (
	MaxWindow     = 7 * 24 * time.Hour
	DefaultWindow = 24 * time.Hour
	MaxLogLimit   = 200
	DefaultLogs   = 100
)

// Window is a [From, To) range in Unix milliseconds.
type Window struct{ From, To int64 }

// ParseWindow reads `from` and `to` (Unix ms, either may be empty): default the last
// 24 hours, at most seven days.
func ParseWindow(from, to string, now time.Time) (Window, error) {
	w := Window{To: now.UnixMilli()}
	if to != "" {
		v, err := strconv.ParseInt(to, 10, 64)
		if err != nil || v < 0 {
			return w, invalid("to", "to must be a time in Unix milliseconds")
		}
		w.To = v
	}
	w.From = w.To - DefaultWindow.Milliseconds()
	if from != "" {
		v, err := strconv.ParseInt(from, 10, 64)
		if err != nil || v < 0 {
			return w, invalid("from", "from must be a time in Unix milliseconds")
		}
		w.From = v
	}
	if w.From >= w.To {
		return w, invalid("from", "from must be before to")
	}
	if w.To-w.From > MaxWindow.Milliseconds() {
		return w, invalid("from", "the range from..to is at most seven days")
	}
	return w, nil
}

// LogPage is a page of run log entries, newest first.
type LogPage struct {
	Logs       []json.RawMessage `json:"logs"`
	From       int64             `json:"from"`
	To         int64             `json:"to"`
	NextCursor *string           `json:"next_cursor"`
}

type logCursor struct {
	TS int64  `json:"t"`
	ID string `json:"i"`
}

// Logs returns w's run log entries in the window, newest first, limit per page; the
// cursor continues to older entries of the same window.
func (s *Service) Logs(ctx context.Context, w *catalog.Workflow, win Window, limitArg, cursor string) (LogPage, error) {
	limit := DefaultLogs
	if limitArg != "" {
		n, err := strconv.Atoi(limitArg)
		if err != nil || n < 1 || n > MaxLogLimit {
			return LogPage{}, invalid("limit", "limit must be 1 to %d", MaxLogLimit)
		}
		limit = n
	}
	var after *logCursor
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		var c logCursor
		if err != nil || json.Unmarshal(raw, &c) != nil || c.ID == "" {
			return LogPage{}, invalid("cursor", "cursor is not one this endpoint returned")
		}
		after = &c
	}
	e, err := s.logs.Engine(w.ClusterID)
	if err != nil {
		return LogPage{}, err
	}
	where := fmt.Sprintf("workflow_id = %s AND ts >= fromUnixTimestamp64Milli(%d) AND ts < fromUnixTimestamp64Milli(%d)",
		sqlquote.String(w.ID.String()), win.From, win.To)
	if after != nil {
		where += fmt.Sprintf(" AND (ts, id) < (fromUnixTimestamp64Milli(%d), %s)", after.TS, sqlquote.String(after.ID))
	}
	rows, err := e.QueryStrings(ctx, fmt.Sprintf(`SELECT formatRowNoNewline('JSONEachRow', id, time_ms, run_id, event_type,
		workflow_revision, source, status, matches, sink_id, sink_type, attempts, duration_ms, schedule_lag_ms, error)
		FROM (SELECT id, toUnixTimestamp64Milli(ts) AS time_ms, run_id, event_type, workflow_revision, source, status,
		matches, sink_id, sink_type, attempts, duration_ms, schedule_lag_ms, error, ts
		FROM _svc.workflow_log WHERE %s ORDER BY ts DESC, id DESC LIMIT %d)
		SETTINGS output_format_json_quote_64bit_integers = 0`, where, limit+1))
	if err != nil {
		return LogPage{}, err
	}
	page := LogPage{Logs: []json.RawMessage{}, From: win.From, To: win.To}
	for i, r := range rows {
		if i == limit {
			var last struct {
				ID string `json:"id"`
				TS int64  `json:"time_ms"`
			}
			_ = json.Unmarshal(page.Logs[len(page.Logs)-1], &last)
			raw, _ := json.Marshal(logCursor{TS: last.TS, ID: last.ID})
			c := base64.RawURLEncoding.EncodeToString(raw)
			page.NextCursor = &c
			break
		}
		page.Logs = append(page.Logs, tidy(r))
	}
	return page, nil
}

// tidy drops empty delivery fields from entries that are not deliveries.
func tidy(row string) json.RawMessage {
	var m map[string]any
	if json.Unmarshal([]byte(row), &m) != nil {
		return json.RawMessage(row)
	}
	for _, k := range []string{"sink_id", "sink_type", "attempts", "error"} {
		if v, ok := m[k]; ok && (v == "" || v == float64(0)) {
			delete(m, k)
		}
	}
	if m["schedule_lag_ms"] == nil {
		delete(m, "schedule_lag_ms")
	}
	out, _ := json.Marshal(m)
	return out
}

// Point is one metrics bucket.
type Point struct {
	BucketMS   int64 `json:"bucket_ms"`
	Executions int64 `json:"executions"`
	Matches    int64 `json:"matches"`
	SinkEvents int64 `json:"sink_events"`
	Errors     int64 `json:"errors"`
}

// Totals sums the points.
type Totals struct {
	Executions int64 `json:"executions"`
	Matches    int64 `json:"matches"`
	SinkEvents int64 `json:"sink_events"`
	Errors     int64 `json:"errors"`
}

// Metrics are bucketed counts over a window.
type Metrics struct {
	Points []Point `json:"points"`
	Totals Totals  `json:"totals"`
	From   int64   `json:"from"`
	To     int64   `json:"to"`
	// BucketSeconds is the width of every point's bucket.
	BucketSeconds int64 `json:"bucket_seconds"`
}

// bucketFor picks a bucket width giving at most about 300 points.
func bucketFor(win Window) int64 {
	span := win.To - win.From
	for _, b := range []int64{1_000, 10_000, 60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000} {
		if span/b <= 300 {
			return b
		}
	}
	return 86_400_000
}

// Metrics counts w's evaluations, matches, successful sink deliveries and errors
// (failed SQL and failed deliveries) per bucket; buckets start at multiples of the
// width and every bucket of the window is present.
func (s *Service) Metrics(ctx context.Context, w *catalog.Workflow, win Window) (Metrics, error) {
	e, err := s.logs.Engine(w.ClusterID)
	if err != nil {
		return Metrics{}, err
	}
	b := bucketFor(win)
	rows, err := e.QueryStrings(ctx, fmt.Sprintf(`SELECT formatRowNoNewline('JSONEachRow', bucket_ms, executions, matches, sink_events, errors) FROM (
		SELECT intDiv(toUnixTimestamp64Milli(ts), %d) * %d AS bucket_ms,
			countIf(event_type = %s) AS executions,
			sumIf(matches, event_type = %s) AS matches,
			countIf(event_type = %s AND status = 'ok') AS sink_events,
			countIf(status = 'error') AS errors
		FROM _svc.workflow_log
		WHERE workflow_id = %s AND ts >= fromUnixTimestamp64Milli(%d) AND ts < fromUnixTimestamp64Milli(%d)
		GROUP BY bucket_ms ORDER BY bucket_ms) SETTINGS output_format_json_quote_64bit_integers = 0`,
		b, b, sqlquote.String(EventEvaluated), sqlquote.String(EventEvaluated), sqlquote.String(EventDelivered),
		sqlquote.String(w.ID.String()), win.From, win.To))
	if err != nil {
		return Metrics{}, err
	}
	got := map[int64]Point{}
	for _, r := range rows {
		var p Point
		if err := json.Unmarshal([]byte(r), &p); err == nil {
			got[p.BucketMS] = p
		}
	}
	m := Metrics{Points: []Point{}, From: win.From, To: win.To, BucketSeconds: b / 1000}
	for t := win.From / b * b; t < win.To; t += b {
		p, ok := got[t]
		if !ok {
			p = Point{BucketMS: t}
		}
		m.Points = append(m.Points, p)
		m.Totals.Executions += p.Executions
		m.Totals.Matches += p.Matches
		m.Totals.SinkEvents += p.SinkEvents
		m.Totals.Errors += p.Errors
	}
	return m, nil
}

// RunsPage is a page of runs.
type RunsPage struct {
	Runs       []Run   `json:"runs"`
	NextCursor *string `json:"next_cursor"`
}

// Runs lists w's runs: limit 1 to 100 (default 20), cursor from the previous page.
func (s *Service) Runs(ctx context.Context, w *catalog.Workflow, limitArg, cursor string) (RunsPage, error) {
	limit := 20
	if limitArg != "" {
		n, err := strconv.Atoi(limitArg)
		if err != nil || n < 1 || n > 100 {
			return RunsPage{}, invalid("limit", "limit must be 1 to 100")
		}
		limit = n
	}
	var page []byte
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		rest, ok := strings.CutPrefix(string(raw), w.ID.String()+":")
		if err != nil || !ok || rest == "" {
			return RunsPage{}, invalid("cursor", "cursor is not one this workflow's runs endpoint returned")
		}
		page = []byte(rest)
	}
	runs, next, err := s.engine.ListRuns(ctx, w.ID, limit, page)
	if err != nil {
		if err == ErrBadCursor {
			return RunsPage{}, invalid("cursor", "cursor is not one this workflow's runs endpoint returned")
		}
		return RunsPage{}, err
	}
	out := RunsPage{Runs: runs}
	if out.Runs == nil {
		out.Runs = []Run{}
	}
	if next != nil {
		c := base64.RawURLEncoding.EncodeToString(append([]byte(w.ID.String()+":"), next...))
		out.NextCursor = &c
	}
	return out, nil
}
