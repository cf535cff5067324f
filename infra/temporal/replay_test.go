package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/svc-data/svc/infra/testenv"
	"github.com/svc-data/svc/workflows"
)

var recordHistory = flag.Bool("record-history", false,
	"run one evaluation on TEMPORAL_ADDR and record its history into testdata before replaying it")

// evaluateHistory is the history of one manual evaluation, recorded from a real run
// (`go test ./infra/temporal/ -run TestEvaluationReplays -args -record-history` with the
// harness's TEMPORAL_ADDR).
const evaluateHistory = "testdata/evaluate_history.json"

// TestEvaluationReplays replays a recorded evaluation through today's workflow code:
// Temporal re-runs workflow code against the history of every execution still open
// after a deploy, so a change to evaluate that no longer matches what it recorded (an
// activity added, a local activity made a remote one, options changed) would fail every
// run in flight. That change needs a workflow.GetVersion branch, or a new workflow type.
func TestEvaluationReplays(t *testing.T) {
	if *recordHistory {
		record(t)
	}
	r := worker.NewWorkflowReplayer()
	e := &Engine{}
	e.cfg.validate()
	r.RegisterWorkflowWithOptions(e.evaluate, workflow.RegisterOptions{Name: evaluateName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, evaluateHistory); err != nil {
		t.Fatalf("the recorded evaluation does not replay through today's code: %v", err)
	}
}

// noopEvaluator completes every evaluation: the history records the local activity's
// outcome, not what it did.
type noopEvaluator struct{}

func (noopEvaluator) Evaluate(context.Context, workflows.Execution) error { return nil }

// record runs one manual evaluation on the harness's Temporal and writes its history.
func record(t *testing.T) {
	addr := testenv.Temporal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	queue := fmt.Sprintf("replay-%d-%d", os.Getpid(), time.Now().UnixNano())
	e, err := Dial(ctx, EngineConfig{Addr: addr, TaskQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(ctx)
	if err := e.StartWorker(noopEvaluator{}); err != nil {
		t.Fatal(err)
	}
	wf := uuid.New()
	runID, err := e.StartRun(ctx, wf, "recorded")
	if err != nil {
		t.Fatal(err)
	}
	id := e.prefix(wf) + "m-recorded"
	if err := e.cl.GetWorkflow(ctx, id, runID).Get(ctx, nil); err != nil {
		t.Fatalf("the evaluation did not complete: %v", err)
	}
	var h historypb.History
	it := e.cl.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	// protojson varies its spacing on purpose; json.Indent makes the file stable to diff.
	compact, err := protojson.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(evaluateHistory), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(evaluateHistory, append(b.Bytes(), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	// The file must load as the replayer loads it.
	f, err := os.Open(evaluateHistory)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{}); err != nil {
		t.Fatal(err)
	}
}
