package svcdtest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// envValue is the value svcd sees for name in env: the last entry wins.
func envValue(env []string, name string) (string, bool) {
	v, ok := "", false
	for _, kv := range env {
		if rest, found := strings.CutPrefix(kv, name+"="); found {
			v, ok = rest, true
		}
	}
	return v, ok
}

// forgetSchedules deletes the schedules a test's svcd made on the harness's shared
// Temporal (its task queue's workflows and its alerts, whose tick fires every second)
// and terminates their open executions. Without it a stopped svcd's schedules go on
// starting executions that no worker runs for the rest of the suite: a dozen alert
// ticks kept the harness's Temporal at 0.4 core for the last half of `go tool task test`.
// Best effort: a failure only leaves what it would have removed.
func forgetSchedules(env []string) {
	addr, _ := envValue(env, "SVC_TEMPORAL_ADDR")
	queue, _ := envValue(env, "SVC_TEMPORAL_TASK_QUEUE")
	if addr == "" || queue == "" {
		return // svcd ran a Temporal of its own, gone with it
	}
	namespace, ok := envValue(env, "SVC_TEMPORAL_NAMESPACE")
	if !ok || namespace == "" {
		namespace = "svc"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cl, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: namespace,
		Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return
	}
	defer cl.Close()
	queues := []string{queue, queue + "-alerts"}
	if it, err := cl.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 1000}); err == nil {
		for it.HasNext() {
			s, err := it.Next()
			if err != nil {
				break
			}
			for _, q := range queues {
				if strings.HasPrefix(s.ID, q+".") {
					_ = cl.ScheduleClient().GetHandle(ctx, s.ID).Delete(ctx)
				}
			}
		}
	}
	for _, q := range queues {
		resp, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: namespace, PageSize: 1000,
			Query: fmt.Sprintf("TaskQueue = '%s' AND ExecutionStatus = 'Running'", q)})
		if err != nil {
			continue
		}
		for _, x := range resp.Executions {
			_ = cl.TerminateWorkflow(ctx, x.Execution.WorkflowId, x.Execution.RunId, "the test that made it is over")
		}
	}
}
