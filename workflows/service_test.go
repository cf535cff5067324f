package workflows

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/es"
	"github.com/svc-data/svc/query"
)

// Unit tests of the Service with fakes of its ports (the engine, the querier, the table
// writer, the log engine) over a real catalog on an in-memory event store. The same
// paths run end to end against Temporal and the engine in cmd/svcd's workflows tests.

// memStore is an in-memory es.Store.
type memStore struct {
	mu     sync.Mutex
	events []es.Event
}

func (m *memStore) Append(_ context.Context, stream string, exp es.Expected, evs ...es.NewEvent) (es.AppendResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var last uint64
	exists := false
	for _, e := range m.events {
		if e.Stream == stream {
			last, exists = e.Version, true
		}
	}
	if err := exp.Check(last, exists); err != nil {
		return es.AppendResult{}, err
	}
	var res es.AppendResult
	for _, ne := range evs {
		v := uint64(0)
		if exists {
			v = last + 1
		}
		id := ne.ID
		if id == uuid.Nil {
			id = uuid.New()
		}
		e := es.Event{ID: id, Stream: stream, Type: ne.Type, Data: ne.Data, Metadata: ne.Metadata, Version: v,
			Position: uint64(len(m.events) + 1), Time: time.Now()}
		m.events = append(m.events, e)
		last, exists = v, true
		res = es.AppendResult{Version: v, Position: e.Position}
	}
	return res, nil
}

func (m *memStore) ReadStream(_ context.Context, stream string, from uint64) es.Iterator {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []es.Event
	for _, e := range m.events {
		if e.Stream == stream && e.Version >= from {
			out = append(out, e)
		}
	}
	return &es.SliceIterator{Events: out}
}

func (m *memStore) ReadAll(_ context.Context, after uint64) es.Iterator {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []es.Event
	for _, e := range m.events {
		if e.Position > after {
			out = append(out, e)
		}
	}
	return &es.SliceIterator{Events: out}
}

func (m *memStore) Close() error { return nil }

// schedule is what the fake engine holds for one workflow.
type schedule struct {
	interval time.Duration
	paused   bool
}

// fakeEngine records schedules; fail makes every schedule call fail.
type fakeEngine struct {
	mu        sync.Mutex
	schedules map[uuid.UUID]schedule
	deleted   []uuid.UUID
	fail      error
}

func newFakeEngine() *fakeEngine { return &fakeEngine{schedules: map[uuid.UUID]schedule{}} }

func (f *fakeEngine) StartRun(context.Context, uuid.UUID, string) (string, error) {
	return "run-1", nil
}
func (f *fakeEngine) CancelRun(context.Context, uuid.UUID, string) error { return nil }
func (f *fakeEngine) DescribeRun(context.Context, uuid.UUID, string) (Run, error) {
	return Run{}, ErrRunNotFound
}
func (f *fakeEngine) ListRuns(context.Context, uuid.UUID, int, []byte) ([]Run, []byte, error) {
	return nil, nil, nil
}

func (f *fakeEngine) UpsertSchedule(_ context.Context, wf uuid.UUID, sc Schedule) error {
	interval, paused := sc.Every, sc.Paused
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.schedules[wf] = schedule{interval, paused}
	return nil
}

func (f *fakeEngine) DeleteSchedule(_ context.Context, wf uuid.UUID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	delete(f.schedules, wf)
	f.deleted = append(f.deleted, wf)
	return nil
}

func (f *fakeEngine) Schedules(context.Context) ([]uuid.UUID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []uuid.UUID
	for id := range f.schedules {
		ids = append(ids, id)
	}
	return ids, nil
}

func (f *fakeEngine) get(wf uuid.UUID) (schedule, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.schedules[wf]
	return s, ok
}

// fakeQuerier answers every statement with rows (JSONEachRow lines) or err.
type fakeQuerier struct {
	rows []string
	err  error
	reqs []query.Request
}

type rowsResponse struct{ rows []string }

func (r rowsResponse) QueryID() string     { return "" }
func (r rowsResponse) ContentType() string { return "application/x-ndjson" }
func (r rowsResponse) WriteTo(w *bufio.Writer) error {
	for _, row := range r.rows {
		w.WriteString(row + "\n")
	}
	return w.Flush()
}

func (q *fakeQuerier) Run(_ context.Context, req query.Request) (query.Response, error) {
	q.reqs = append(q.reqs, req)
	if q.err != nil {
		return nil, q.err
	}
	return rowsResponse{q.rows}, nil
}

func (q *fakeQuerier) Cancel(context.Context, uuid.UUID, uuid.UUID, string, string) error { return nil }

// insert is one call of the fake table writer.
type insert struct {
	database, table, token, ndjson string
}

type fakeTables struct{ inserts []insert }

func (f *fakeTables) InsertDocs(_ context.Context, _ uuid.UUID, database, table, token string, ndjson []byte) error {
	f.inserts = append(f.inserts, insert{database, table, token, string(ndjson)})
	return nil
}

// fakeLogs is a log engine that keeps the statements it was sent.
type fakeLogs struct{ execs []string }

func (f *fakeLogs) Engine(uuid.UUID) (LogEngine, error) { return f, nil }
func (f *fakeLogs) Exec(_ context.Context, sql string) error {
	f.execs = append(f.execs, sql)
	return nil
}
func (f *fakeLogs) QueryStrings(context.Context, string) ([]string, error) { return nil, nil }

type fixture struct {
	svc     *Service
	engine  *fakeEngine
	querier *fakeQuerier
	tables  *fakeTables
	logs    *fakeLogs
	org     uuid.UUID
	cluster uuid.UUID
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st := &memStore{}
	m := catalog.NewModel()
	p := catalog.NewProjector(st, m, 0, nil)
	if _, err := p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	cmds := catalog.NewService(st, m, p)
	b, err := cmds.EnsureBootstrap(ctx, catalog.BootstrapConfig{Organization: "acme", Token: "svck_workflows_unit"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{engine: newFakeEngine(), querier: &fakeQuerier{}, tables: &fakeTables{}, logs: &fakeLogs{},
		org: b.Organization.ID, cluster: b.Cluster.ID}
	f.svc = New(Config{}, m, cmds, f.engine, f.querier, f.tables, f.logs, nil)
	return f
}

func (f *fixture) create(t *testing.T, body string) View {
	t.Helper()
	v, err := f.svc.Create(context.Background(), f.org, f.cluster, []byte(body))
	if err != nil {
		t.Fatalf("create %s: %v", body, err)
	}
	return v
}

func TestServiceSchedulesFollowDefinitions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	v := f.create(t, `{"name":"every-5","query":{"database":"default","sql":"SELECT 1"},"interval_seconds":5}`)
	if s, ok := f.engine.get(v.ID); !ok || s != (schedule{5 * time.Second, false}) {
		t.Fatalf("schedule after create %+v %v, want every 5s running", s, ok)
	}
	if v.NextRunAt == nil || v.NextRunAt.Unix()%5 != 0 {
		t.Errorf("next_run_at %v, want a multiple of the interval", v.NextRunAt)
	}
	w, _ := f.svc.Workflow(f.cluster, v.ID)
	// Disabled: the schedule pauses, and no next run is shown.
	v, err := f.svc.Update(ctx, w, []byte(`{"enabled":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := f.engine.get(v.ID); !s.paused || v.NextRunAt != nil {
		t.Errorf("disabled: schedule %+v, next_run_at %v; want paused and none", s, v.NextRunAt)
	}
	// Manual-only: the schedule goes.
	w, _ = f.svc.Workflow(f.cluster, v.ID)
	if v, err = f.svc.Update(ctx, w, []byte(`{"enabled":true,"interval_seconds":null}`)); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.engine.get(v.ID); ok || v.NextRunAt != nil {
		t.Errorf("manual-only: schedule kept (%v) or next_run_at %v", ok, v.NextRunAt)
	}
	// Deleted: its schedule is removed too.
	w, _ = f.svc.Workflow(f.cluster, v.ID)
	if err := f.svc.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.engine.deleted, v.ID) {
		t.Errorf("delete did not remove the schedule")
	}
}

func TestServiceEngineDownLeavesNoNextRunUntilReconciled(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.engine.fail = errors.New("engine unavailable")
	v := f.create(t, `{"name":"w","query":{"database":"default","sql":"SELECT 1"},"interval_seconds":60}`)
	if v.NextRunAt != nil {
		t.Fatalf("next_run_at %v while the engine refused the schedule", v.NextRunAt)
	}
	f.engine.fail = nil
	if err := f.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if s, ok := f.engine.get(v.ID); !ok || s.interval != time.Minute {
		t.Fatalf("schedule after reconcile %+v %v", s, ok)
	}
	w, _ := f.svc.Workflow(f.cluster, v.ID)
	if f.svc.View(w).NextRunAt == nil {
		t.Error("no next_run_at after the reconciler wrote the schedule")
	}
}

func TestServiceReconcileDeletesAnOrphanOnlyOnItsSecondPass(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	orphan := uuid.New() // a schedule whose workflow this node does not know
	f.engine.schedules[orphan] = schedule{time.Second, false}
	if err := f.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.engine.get(orphan); !ok {
		t.Fatal("an orphan was deleted on the first pass: it may be another node's new workflow")
	}
	if err := f.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.engine.get(orphan); ok {
		t.Fatal("an orphan survived its second pass")
	}
}

func TestServiceEvaluateDeliversToATableSinkAndLogs(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	v := f.create(t, `{"name":"alert","query":{"database":"default","sql":"SELECT n FROM t WHERE n > 1"},`+
		`"sinks":[{"type":"table","settings":{"database":"default","table":"alerts"}}]}`)
	f.querier.rows = []string{`{"n":2}`, `{"n":3}`}
	if err := f.svc.Evaluate(ctx, Execution{WorkflowID: v.ID, RunID: "r1", Source: SourceManual, StartedAt: time.Now(), Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if len(f.querier.reqs) != 1 {
		t.Fatalf("%d statements run, want 1", len(f.querier.reqs))
	}
	req := f.querier.reqs[0]
	if req.OrgID != f.org || req.ClusterID != f.cluster || req.Database != "default" || req.SQL != "SELECT n FROM t WHERE n > 1" ||
		req.QueryID != "wf-r1-1" || req.Format != "JSONEachRow" {
		t.Errorf("statement run as %+v", req)
	}
	sink := v.Sinks[0].ID
	want := insert{"default", "alerts", TableToken("r1", sink.String()), "{\"n\":2}\n{\"n\":3}\n"}
	if len(f.tables.inserts) != 1 || f.tables.inserts[0] != want {
		t.Errorf("table sink got %+v, want %+v", f.tables.inserts, want)
	}
	if len(f.logs.execs) != 1 || !strings.Contains(f.logs.execs[0], `"event_type":"workflow.evaluated"`) ||
		!strings.Contains(f.logs.execs[0], `"event_type":"workflow.delivered"`) || !strings.Contains(f.logs.execs[0], "'wflog/r1'") {
		t.Errorf("run log %q, want the evaluation and the delivery, deduplicated by run", f.logs.execs)
	}
}

func TestServiceEvaluateRecordsAFailedStatement(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	v := f.create(t, `{"name":"broken","query":{"database":"default","sql":"SELECT * FROM missing"},`+
		`"sinks":[{"type":"table","settings":{"database":"default","table":"alerts"}}]}`)
	f.querier.err = fmt.Errorf("no_such_table: missing")
	// The run itself succeeds: the failure is the statement's, and it is in the log.
	if err := f.svc.Evaluate(ctx, Execution{WorkflowID: v.ID, RunID: "r2", Source: SourceManual, StartedAt: time.Now(), Attempt: 1}); err != nil {
		t.Fatalf("evaluate: %v, want nil (the statement's failure is recorded, not returned)", err)
	}
	if len(f.tables.inserts) != 0 {
		t.Errorf("sinks ran after a failed statement: %+v", f.tables.inserts)
	}
	if len(f.logs.execs) != 1 || !strings.Contains(f.logs.execs[0], `"status":"error"`) || !strings.Contains(f.logs.execs[0], "no_such_table") {
		t.Errorf("run log %q, want the error", f.logs.execs)
	}
	// A deleted workflow's late evaluation does nothing.
	if err := f.svc.Evaluate(ctx, Execution{WorkflowID: uuid.New(), RunID: "r3"}); err != nil || len(f.logs.execs) != 1 {
		t.Errorf("evaluation of an unknown workflow: %v, %d log writes", err, len(f.logs.execs))
	}
}
