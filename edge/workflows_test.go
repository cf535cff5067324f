package edge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/workflows"
)

// wfEngine stands in for Temporal: run "done" finished, run "gone" is unknown, and the
// runs list has two pages.
type wfEngine struct{}

func (wfEngine) StartRun(context.Context, uuid.UUID, string) (string, error) {
	return "0b9a6c1e-5f00-4c4e-9d44-1f7c0d3f2a10", nil
}

func (wfEngine) CancelRun(_ context.Context, _ uuid.UUID, run string) error {
	switch run {
	case "done":
		return workflows.ErrRunFinished
	case "gone":
		return workflows.ErrRunNotFound
	}
	return nil
}

func (wfEngine) DescribeRun(context.Context, uuid.UUID, string) (workflows.Run, error) {
	return workflows.Run{}, workflows.ErrRunNotFound
}

func (wfEngine) ListRuns(_ context.Context, wf uuid.UUID, _ int, page []byte) ([]workflows.Run, []byte, error) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	end := start.Add(time.Second)
	if page == nil {
		return []workflows.Run{{ID: "r2", WorkflowID: wf, Source: "scheduled", Status: "running", StartedAt: start}}, []byte("p2"), nil
	}
	return []workflows.Run{{ID: "r1", WorkflowID: wf, Source: "manual", Status: "completed", StartedAt: start, FinishedAt: &end}}, nil, nil
}

func (wfEngine) UpsertSchedule(context.Context, uuid.UUID, workflows.Schedule) error { return nil }
func (wfEngine) DeleteSchedule(context.Context, uuid.UUID) error                     { return nil }
func (wfEngine) Schedules(context.Context) ([]uuid.UUID, error)                      { return nil, nil }

// wfLog answers the run log's two queries with one row each.
type wfLog struct{}

func (wfLog) Engine(uuid.UUID) (workflows.LogEngine, error) { return wfLog{}, nil }
func (wfLog) Exec(context.Context, string) error            { return nil }
func (wfLog) QueryStrings(_ context.Context, sql string) ([]string, error) {
	if strings.Contains(sql, "bucket_ms") {
		return []string{`{"bucket_ms":1767323040000,"executions":3,"matches":7,"sink_events":3,"errors":1}`}, nil
	}
	return []string{`{"id":"r1/0","time_ms":1767323045000,"run_id":"r1","event_type":"workflow.evaluated","workflow_revision":1,` +
		`"source":"manual","status":"ok","matches":3,"sink_id":"","sink_type":"","attempts":0,"duration_ms":1.5,"schedule_lag_ms":null,"error":""}`}, nil
}

// TestOpenAPIWorkflowAnswers walks the workflow operations through their documented
// answers with the real workflow service over a stand-in engine.
func TestOpenAPIWorkflowAnswers(t *testing.T) {
	h := newHarness(t)
	sealer, err := workflows.NewSealer("test key", "")
	if err != nil {
		t.Fatal(err)
	}
	h.s.deps.Workflows = workflows.New(workflows.Config{}, h.m, h.svc, wfEngine{}, fakeQuery{}, nil, wfLog{}, sealer)
	create := `{"name": " Daily ", "query": {"database": "default", "sql": "SELECT 1"}, "interval_seconds": 60,
		"sinks": [{"type": "http", "settings": {"url": "https://93.184.215.14/hook", "headers": {"X-Token": "t"}}},
		          {"type": "table", "settings": {"database": "default", "table": "events"}}]}`
	a := h.expect(request{method: "POST", target: "/v1/workflows", as: "admin", body: create}, 201, "")
	var wf struct {
		ID        string
		NextRunAt *time.Time `json:"next_run_at"`
	}
	_ = json.Unmarshal(a.body, &wf)
	if wf.NextRunAt == nil {
		t.Fatalf("created %s", a.body)
	}
	base := "/v1/workflows/" + wf.ID
	h.expect(request{method: "POST", target: "/v1/workflows", as: "org_admin", body: create}, 409, "workflow_exists")
	h.expect(request{method: "POST", target: "/v1/workflows", as: "admin", body: `{"name": "x", "sql": "SELECT 1"}`}, 400, "invalid_sql")
	// Found by schemathesis 4.32.5 with the scope pinned: an error code is the document's
	// `^[a-z][a-z0-9_]*$` whatever field path or made-up member it names.
	h.expect(request{method: "POST", target: "/v1/workflows", as: "admin", body: `{"name": "x", "query": {"database": "", "sql": "SELECT 1"}, "interval_seconds": 60}`}, 400, "invalid_query_database")
	h.expect(request{method: "POST", target: "/v1/workflows", as: "admin", body: `{"name": "x", "query": {"database": "default", "sql": "SELECT 1"}, "interval_seconds": 60, "sinks": [{"type": "http", "URL-X": "u"}]}`}, 400, "invalid_sinks_0_url_x")
	h.expect(request{method: "GET", target: "/v1/workflows", as: "org_member"}, 200, "")
	h.expect(request{method: "GET", target: "/v1/workflows", as: "admin", noScope: true}, 400, "missing_scope")
	h.expect(request{method: "GET", target: base, as: "org_admin_oauth"}, 200, "")
	h.expect(request{method: "PATCH", target: base, as: "org_admin", body: `{"enabled": false, "description": "d"}`}, 200, "")
	h.expect(request{method: "POST", target: base + "/runs", as: "admin", header: map[string]string{"Idempotency-Key": "k 1"}}, 400, "invalid_idempotency_key")
	h.expect(request{method: "POST", target: base + "/runs", as: "admin", header: map[string]string{"Idempotency-Key": "k-1"}}, 202, "")
	page := h.expect(request{method: "GET", target: base + "/runs?limit=1", as: "org_member"}, 200, "")
	var p struct {
		NextCursor *string `json:"next_cursor"`
	}
	_ = json.Unmarshal(page.body, &p)
	if p.NextCursor == nil {
		t.Fatalf("first page %s", page.body)
	}
	h.expect(request{method: "GET", target: base + "/runs?cursor=" + *p.NextCursor, as: "org_member"}, 200, "")
	h.expect(request{method: "GET", target: base + "/runs?limit=101", as: "admin"}, 400, "invalid_limit")
	h.expect(request{method: "GET", target: base + "/runs?cursor=bm9wZQ", as: "admin"}, 400, "invalid_cursor")
	h.expect(request{method: "POST", target: base + "/runs/r2/cancel", as: "admin"}, 202, "")
	h.expect(request{method: "POST", target: base + "/runs/done/cancel", as: "admin"}, 409, "run_finished")
	h.expect(request{method: "POST", target: base + "/runs/gone/cancel", as: "admin"}, 404, "run_not_found")
	h.expect(request{method: "GET", target: base + "/logs", as: "org_member"}, 200, "")
	h.expect(request{method: "GET", target: base + "/logs?limit=201", as: "admin"}, 400, "invalid_limit")
	h.expect(request{method: "GET", target: base + "/metrics?from=0&to=3600000", as: "org_member"}, 200, "")
	h.expect(request{method: "GET", target: base + "/metrics?from=0&to=704800000", as: "admin"}, 400, "invalid_from")
	h.expect(request{method: "DELETE", target: base, as: "admin"}, 204, "")
	h.expect(request{method: "GET", target: base, as: "admin"}, 404, "workflow_not_found")
	h.expect(request{method: "GET", target: base + "/runs", as: "admin"}, 404, "workflow_not_found")
}
