package edge

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/edge/ingest"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/workflows"
)

// Workflow endpoints (SPEC: Workflows). Every one needs `organization` and `cluster`,
// and an admin API key of that organization and cluster, a user session, or an OAuth
// token with full_access; members read, organization administrators (and admin keys)
// write, run and cancel.

// workflowAccess checks who may call a workflow endpoint; write is true for changes,
// runs and cancels.
func (s *Server) workflowAccess(ctx *fasthttp.RequestCtx, p *Principal, write bool) error {
	if err := s.scopeAccess(ctx, p, write, "workflows"); err != nil {
		return err
	}
	if s.deps.Workflows == nil {
		return workflowErr(workflows.ErrDisabled)
	}
	return workflowErr(s.deps.Workflows.Available(s.work()))
}

// scopeAccess is the one rule for workflow and alert endpoints: admin keys (no custom
// roles), user sessions and full_access tokens; members read, organization
// administrators write; organization and cluster named in the query.
func (s *Server) scopeAccess(ctx *fasthttp.RequestCtx, p *Principal, write bool, what string) error {
	if p.Key != nil {
		if p.CustomRole() {
			return forbidden("use " + what + "; custom-role keys are not supported there, use an admin key")
		}
		if p.Permission() != catalog.PermAdmin {
			return forbidden("use " + what + "; they need an admin API key, a user session or an OAuth token with full_access")
		}
	}
	args := ctx.QueryArgs()
	if !args.Has("organization") || !args.Has("cluster") || len(args.Peek("organization")) == 0 || len(args.Peek("cluster")) == 0 {
		return apiErr(400, "missing_scope", strings.TrimSuffix(what, "s")+" endpoints need the organization and cluster query parameters",
			"add ?organization=<name>&cluster=<name>")
	}
	if err := needCluster(p); err != nil {
		return err
	}
	if p.User != nil {
		switch {
		case p.OrgRole == catalog.RoleAdmin:
		case p.OrgRole == catalog.RoleMember && !write:
		case p.OrgRole == catalog.RoleMember:
			return forbidden("change " + what + "; organization administrators do that")
		default:
			return forbidden("use this organization's " + what)
		}
	}
	return nil
}

// workflowTarget checks access and resolves {workflow_id} to a workflow of the cluster.
func (s *Server) workflowTarget(ctx *fasthttp.RequestCtx, p *Principal, write bool) (*catalog.Workflow, error) {
	if err := s.workflowAccess(ctx, p, write); err != nil {
		return nil, err
	}
	id, err := uuid.Parse(stringParam(ctx, "workflow_id"))
	var w *catalog.Workflow
	ok := false
	if err == nil {
		w, ok = s.deps.Workflows.Workflow(p.ClusterID, id)
	}
	if !ok {
		return nil, apiErr(404, "workflow_not_found", "no such workflow in this cluster", "list them with GET /v1/workflows")
	}
	return w, nil
}

// workflowErr maps the workflow domain's errors to answers.
func workflowErr(err error) error {
	var fe *workflows.FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return &APIError{Status: 400, Code: "invalid_" + codeWord(fe.Field), Field: fe.Field, Message: fe.Message}
	case errors.Is(err, workflows.ErrDisabled):
		return apiErr(503, "workflows_disabled", err.Error(), "the operator enables workflows by unsetting SVC_WORKFLOWS=off")
	case errors.Is(err, workflows.ErrUnavailable):
		return &APIError{Status: 503, Code: "workflows_unavailable",
			Message: "the workflow execution service is unavailable or did not confirm; retry", Hint: "retry shortly", RetryAfter: 1}
	case errors.Is(err, workflows.ErrRunNotFound):
		return apiErr(404, "run_not_found", "no such run of this workflow (a run started a moment ago may not be listed yet)", "")
	case errors.Is(err, workflows.ErrRunFinished):
		return apiErr(409, "run_finished", "the run already finished, so it cannot be canceled", "")
	case errors.Is(err, catalog.ErrLimit):
		return apiErr(409, "workflow_limit_reached", err.Error(), "delete a workflow first")
	case errors.Is(err, catalog.ErrExists):
		return &APIError{Status: 409, Code: "workflow_exists", Field: "name", Message: "a workflow of that name already exists in this cluster",
			Hint: "names are unique per cluster, compared trimmed and lowercased"}
	}
	return err
}

func (s *Server) listWorkflows(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := s.workflowAccess(ctx, p, false); err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"workflows": s.deps.Workflows.List(p.ClusterID)})
	return nil
}

func (s *Server) createWorkflow(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := s.workflowAccess(ctx, p, true); err != nil {
		return err
	}
	v, err := s.deps.Workflows.Create(s.work(), p.OrgID, p.ClusterID, ctx.PostBody())
	if err != nil {
		return workflowErr(err)
	}
	writeJSON(ctx, 201, v)
	return nil
}

func (s *Server) getWorkflow(ctx *fasthttp.RequestCtx, p *Principal) error {
	w, err := s.workflowTarget(ctx, p, false)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, s.deps.Workflows.View(w))
	return nil
}

func (s *Server) patchWorkflow(ctx *fasthttp.RequestCtx, p *Principal) error {
	w, err := s.workflowTarget(ctx, p, true)
	if err != nil {
		return err
	}
	v, err := s.deps.Workflows.Update(s.work(), w, ctx.PostBody())
	if err != nil {
		return workflowErr(err)
	}
	writeJSON(ctx, 200, v)
	return nil
}

func (s *Server) deleteWorkflow(ctx *fasthttp.RequestCtx, p *Principal) error {
	w, err := s.workflowTarget(ctx, p, true)
	if err != nil {
		return err
	}
	if err := s.deps.Workflows.Delete(s.work(), w); err != nil {
		return workflowErr(err)
	}
	ctx.SetStatusCode(204)
	return nil
}

func (s *Server) startWorkflowRun(ctx *fasthttp.RequestCtx, p *Principal) error {
	w, err := s.workflowTarget(ctx, p, true)
	if err != nil {
		return err
	}
	key, err := ingest.IdempotencyHeader(ctx)
	if err != nil {
		return err
	}
	run, err := s.deps.Workflows.StartRun(s.work(), w, key)
	if err != nil {
		return workflowErr(err)
	}
	writeJSON(ctx, 202, map[string]any{"id": run.ID, "workflow_id": run.WorkflowID, "source": run.Source})
	return nil
}

func (s *Server) cancelWorkflowRun(ctx *fasthttp.RequestCtx, p *Principal) error {
	w, err := s.workflowTarget(ctx, p, true)
	if err != nil {
		return err
	}
	if err := s.deps.Workflows.CancelRun(s.work(), w, stringParam(ctx, "run_id")); err != nil {
		return workflowErr(err)
	}
	ctx.SetStatusCode(202)
	return nil
}

func (s *Server) listWorkflowRuns(ctx *fasthttp.RequestCtx, p *Principal) error {
	w, err := s.workflowTarget(ctx, p, false)
	if err != nil {
		return err
	}
	args := ctx.QueryArgs()
	page, err := s.deps.Workflows.Runs(s.work(), w, string(args.Peek("limit")), string(args.Peek("cursor")))
	if err != nil {
		return workflowErr(err)
	}
	writeJSON(ctx, 200, page)
	return nil
}

// window reads from/to; a cursor of the logs endpoint is passed with the from and to it
// came with.
func workflowWindow(ctx *fasthttp.RequestCtx) (workflows.Window, error) {
	args := ctx.QueryArgs()
	w, err := workflows.ParseWindow(string(args.Peek("from")), string(args.Peek("to")), time.Now())
	return w, workflowErr(err)
}

func (s *Server) workflowLogs(ctx *fasthttp.RequestCtx, p *Principal) error {
	w, err := s.workflowTarget(ctx, p, false)
	if err != nil {
		return err
	}
	win, err := workflowWindow(ctx)
	if err != nil {
		return err
	}
	args := ctx.QueryArgs()
	page, err := s.deps.Workflows.Logs(s.work(), w, win, string(args.Peek("limit")), string(args.Peek("cursor")))
	if err != nil {
		return workflowErr(fmt.Errorf("read workflow logs: %w", err))
	}
	writeJSON(ctx, 200, page)
	return nil
}

func (s *Server) workflowMetrics(ctx *fasthttp.RequestCtx, p *Principal) error {
	w, err := s.workflowTarget(ctx, p, false)
	if err != nil {
		return err
	}
	win, err := workflowWindow(ctx)
	if err != nil {
		return err
	}
	m, err := s.deps.Workflows.Metrics(s.work(), w, win)
	if err != nil {
		return workflowErr(fmt.Errorf("read workflow metrics: %w", err))
	}
	writeJSON(ctx, 200, m)
	return nil
}
