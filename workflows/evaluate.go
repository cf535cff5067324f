package workflows

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query"
	"github.com/svc-data/svc/query/statement"
)

// Payload is what every sink of an evaluation receives: an HTTP sink as the JSON body
// of a POST, a table sink as one document per row (the row itself). See
// docs/workflows.md.
type Payload struct {
	WorkflowID       string            `json:"workflow_id"`
	WorkflowName     string            `json:"workflow_name"`
	WorkflowRevision int               `json:"workflow_revision"`
	RunID            string            `json:"run_id"`
	Source           string            `json:"source"`
	SinkID           string            `json:"sink_id"`
	EvaluatedAt      time.Time         `json:"evaluated_at"`
	RowCount         int               `json:"row_count"`
	Rows             []json.RawMessage `json:"rows"`
}

var _ Evaluator = (*Service)(nil)

// Evaluate runs one evaluation: the saved SQL as the organization through the query
// layer, then every sink, then the run log. SQL and sink failures are recorded and the
// evaluation still succeeds (run status is not the SQL's outcome); only cancellation,
// and failing to record the log, end it with an error.
func (s *Service) Evaluate(ctx context.Context, x Execution) error {
	w, ok := s.model.Workflow(x.WorkflowID)
	if !ok {
		return nil // deleted since it was scheduled
	}
	start := time.Now()
	ev := logEntry{Time: start, WorkflowID: w.ID, RunID: x.RunID, EventType: EventEvaluated, Revision: w.Revision,
		Source: x.Source, Status: "ok"}
	if !x.ScheduledAt.IsZero() {
		lag := x.StartedAt.Sub(x.ScheduledAt).Milliseconds()
		ev.LagMS = &lag
	}
	rows, err := s.runSQL(ctx, w, x)
	ev.Matches = len(rows)
	entries := []logEntry{}
	if err != nil {
		ev.Status, ev.Error = "error", err.Error()
		if ctx.Err() != nil {
			ev.Status, ev.Error = "canceled", "the run was canceled"
		}
	}
	if err == nil && len(rows) > 0 {
		p := Payload{WorkflowID: w.ID.String(), WorkflowName: w.Name, WorkflowRevision: w.Revision, RunID: x.RunID,
			Source: x.Source, EvaluatedAt: start.UTC(), RowCount: len(rows), Rows: rows}
		for _, k := range w.Sinks {
			entries = append(entries, s.deliver(ctx, w, k, p))
		}
	}
	ev.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	entries = append([]logEntry{ev}, entries...)
	if s.cfg.HoldAfterSinks != "" {
		_ = os.WriteFile(s.cfg.HoldAfterSinks, []byte(x.RunID), 0o644)
		<-ctx.Done()
	}
	// The log is written even for a canceled run, on a context of its own.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := s.writeLog(lctx, w, x.RunID, entries); err != nil {
		return fmt.Errorf("record the run log: %w", err)
	}
	return ctx.Err()
}

// runSQL runs the saved statement through the query API's layer as the organization
// and returns its rows as JSON objects. The query id is the run's, so the engine
// statement can be found; cancellation goes through the query API's cancel.
func (s *Service) runSQL(ctx context.Context, w *catalog.Workflow, x Execution) ([]json.RawMessage, error) {
	qid := "wf-" + x.RunID + "-" + strconv.Itoa(x.Attempt)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = s.query.Cancel(cctx, w.OrgID, w.ClusterID, w.Database, qid)
		}
	}()
	res, err := s.query.Run(ctx, query.Request{OrgID: w.OrgID, ClusterID: w.ClusterID, Principal: statement.WorkflowRun(),
		Database: w.Database, SQL: w.SQL, Format: "JSONEachRow", QueryID: qid})
	if err != nil {
		return nil, err
	}
	return JSONRows(res, s.cfg.MaxResultBytes, "select fewer rows")
}

// JSONRows reads a JSONEachRow result's rows, at most max bytes of them; past that the
// error names the bound and the remedy. Workflows and alerts read their queries with it.
func JSONRows(res query.Response, max int, remedy string) ([]json.RawMessage, error) {
	var buf bytes.Buffer
	lw := &limitWriter{w: &buf, left: max}
	bw := bufio.NewWriter(lw)
	if err := res.WriteTo(bw); err != nil {
		if lw.over {
			return nil, fmt.Errorf("the result is larger than %d MiB; %s", max>>20, remedy)
		}
		return nil, err
	}
	var rows []json.RawMessage
	for line := range bytes.SplitSeq(buf.Bytes(), []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			rows = append(rows, json.RawMessage(bytes.Clone(line)))
		}
	}
	return rows, nil
}

type limitWriter struct {
	w    io.Writer
	left int
	over bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		l.over = true
		return 0, errors.New("result too large")
	}
	l.left -= len(p)
	return l.w.Write(p)
}

// deliver hands the payload to one sink and says how it went.
func (s *Service) deliver(ctx context.Context, w *catalog.Workflow, k catalog.WorkflowSink, p Payload) logEntry {
	start := time.Now()
	e := logEntry{Time: start, WorkflowID: w.ID, RunID: p.RunID, EventType: EventDelivered, Revision: w.Revision,
		Source: p.Source, SinkID: k.ID.String(), SinkType: k.Type, Status: "ok", Matches: p.RowCount}
	p.SinkID = k.ID.String()
	var attempts int
	var err error
	switch k.Type {
	case catalog.SinkHTTP:
		attempts, err = s.deliverHTTP(ctx, k, p)
	case catalog.SinkTable:
		attempts, err = 1, s.deliverTable(ctx, w, k, p)
	default:
		err = fmt.Errorf("unknown sink type %q", k.Type)
	}
	e.Attempts = attempts
	if err != nil {
		e.Status, e.Error = "error", err.Error()
	}
	e.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return e
}

// deliverTable inserts the rows as documents, once per run: the token is the run's and
// the sink's, so a retried evaluation (a worker killed mid-way) inserts nothing again.
func (s *Service) deliverTable(ctx context.Context, w *catalog.Workflow, k catalog.WorkflowSink, p Payload) error {
	var b bytes.Buffer
	for _, r := range p.Rows {
		b.Write(r)
		b.WriteByte('\n')
	}
	return s.tables.InsertDocs(ctx, w.ClusterID, k.Database, k.Table, TableToken(p.RunID, k.ID.String()), b.Bytes())
}

// TableToken is the deduplication token of a run's rows in a table sink.
func TableToken(runID, sinkID string) string { return "wf/" + runID + "/" + sinkID }

// deliverHTTP POSTs the payload with bounded retries and backoff. The Idempotency-Key
// `<run>/<sink>` lets the receiver drop a delivery it already has (retries, and a
// re-run evaluation): delivery is at least once.
func (s *Service) deliverHTTP(ctx context.Context, k catalog.WorkflowSink, p Payload) (int, error) {
	raw, err := s.sealer.Open(k.SealedURL, k.ID.String()+"/url")
	if err != nil {
		return 0, fmt.Errorf("the sink's URL cannot be read: %w", err)
	}
	headers := map[string]string{}
	if k.SealedHeaders != "" {
		h, err := s.sealer.Open(k.SealedHeaders, k.ID.String()+"/headers")
		if err != nil {
			return 0, fmt.Errorf("the sink's headers cannot be read: %w", err)
		}
		_ = json.Unmarshal([]byte(h), &headers)
	}
	u, err := s.cfg.Egress.Check(ctx, raw)
	if err != nil {
		// The policy's message may quote the URL, a secret: say only what happened.
		return 0, errors.New("the sink's URL is not allowed by the egress policy (SVC_URL_IMPORT_ALLOW); update the sink")
	}
	body, _ := json.Marshal(p)
	dialer := s.cfg.Egress.Dialer(u.Hostname())
	cl := &http.Client{Timeout: s.cfg.HTTPTimeout,
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil, MaxIdleConns: 1},
		// A redirect could lead anywhere; the configured URL is the only destination.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer cl.CloseIdleConnections()
	backoff := s.cfg.HTTPBackoff
	var last error
	for attempt := 1; attempt <= s.cfg.HTTPAttempts; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
		if err != nil {
			return attempt, err
		}
		for n, v := range headers {
			req.Header.Set(n, v)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", p.RunID+"/"+k.ID.String())
		req.Header.Set("User-Agent", "svc-workflows/1")
		resp, err := cl.Do(req)
		retry := true
		switch {
		case err != nil:
			last = fmt.Errorf("POST to the sink failed: %v", redactURL(err))
		default:
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode < 300 {
				return attempt, nil
			}
			last = fmt.Errorf("the sink answered %d", resp.StatusCode)
			retry = resp.StatusCode >= 500 || resp.StatusCode == 429 || resp.StatusCode == 408
		}
		if !retry || attempt == s.cfg.HTTPAttempts || ctx.Err() != nil {
			return attempt, last
		}
		select {
		case <-ctx.Done():
			return attempt, last
		case <-time.After(backoff):
		}
		backoff *= 2
	}
	return s.cfg.HTTPAttempts, last
}

// redactURL keeps the sink's URL (a secret) out of logged errors.
func redactURL(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return "request failed"
}
