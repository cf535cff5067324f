package edge

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/workflows"
	"github.com/svc-data/svc/workflows/alerts"
)

// Alert endpoints (docs/alerts.md). They need what workflow endpoints need: the
// organization and cluster query parameters, and an admin API key, a user session or an
// OAuth token with full_access; members read, organization administrators write.

func (s *Server) alertAccess(ctx *fasthttp.RequestCtx, p *Principal, write bool) error {
	if err := s.scopeAccess(ctx, p, write, "alerts"); err != nil {
		return err
	}
	if s.deps.Alerts == nil {
		return alertErr(workflows.ErrDisabled)
	}
	return alertErr(s.deps.Alerts.Available(s.work()))
}

func (s *Server) alertTarget(ctx *fasthttp.RequestCtx, p *Principal, write bool) (*catalog.Alert, error) {
	if err := s.alertAccess(ctx, p, write); err != nil {
		return nil, err
	}
	id, err := uuid.Parse(stringParam(ctx, "alert_id"))
	var a *catalog.Alert
	ok := false
	if err == nil {
		a, ok = s.deps.Alerts.Alert(p.ClusterID, id)
	}
	if !ok {
		return nil, apiErr(404, "alert_not_found", "no such alert in this cluster", "list them with GET /v1/alerts")
	}
	return a, nil
}

func alertErr(err error) error {
	var fe *alerts.FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return &APIError{Status: 400, Code: "invalid_" + codeWord(fe.Field), Field: fe.Field, Message: fe.Message}
	case errors.Is(err, catalog.ErrLimit):
		return apiErr(409, "alert_limit_reached", err.Error(), "delete an alert first")
	case errors.Is(err, catalog.ErrExists):
		return &APIError{Status: 409, Code: "alert_exists", Field: "name", Message: "an alert of that name already exists in this cluster",
			Hint: "names are unique per cluster, compared trimmed and lowercased"}
	case errors.Is(err, workflows.ErrDisabled):
		return apiErr(503, "alerts_disabled", "alerts run on the workflow service, which is disabled on this deployment", "the operator enables workflows by unsetting SVC_WORKFLOWS=off")
	}
	return workflowErr(err)
}

func (s *Server) listAlerts(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := s.alertAccess(ctx, p, false); err != nil {
		return err
	}
	writeJSON(ctx, 200, map[string]any{"alerts": s.deps.Alerts.List(s.work(), p.ClusterID)})
	return nil
}

func (s *Server) createAlert(ctx *fasthttp.RequestCtx, p *Principal) error {
	if err := s.alertAccess(ctx, p, true); err != nil {
		return err
	}
	v, err := s.deps.Alerts.Create(s.work(), p.OrgID, p.ClusterID, ctx.PostBody())
	if err != nil {
		return alertErr(err)
	}
	writeJSON(ctx, 201, v)
	return nil
}

func (s *Server) getAlert(ctx *fasthttp.RequestCtx, p *Principal) error {
	a, err := s.alertTarget(ctx, p, false)
	if err != nil {
		return err
	}
	writeJSON(ctx, 200, s.deps.Alerts.View(s.work(), a))
	return nil
}

func (s *Server) patchAlert(ctx *fasthttp.RequestCtx, p *Principal) error {
	a, err := s.alertTarget(ctx, p, true)
	if err != nil {
		return err
	}
	v, err := s.deps.Alerts.Update(s.work(), a, ctx.PostBody())
	if err != nil {
		return alertErr(err)
	}
	writeJSON(ctx, 200, v)
	return nil
}

func (s *Server) deleteAlert(ctx *fasthttp.RequestCtx, p *Principal) error {
	a, err := s.alertTarget(ctx, p, true)
	if err != nil {
		return err
	}
	if err := s.deps.Alerts.Delete(s.work(), a); err != nil {
		return alertErr(err)
	}
	ctx.SetStatusCode(204)
	return nil
}

// silenceAlert: {"until": RFC 3339 time} holds notifications until then; {"until": null}
// lifts the silence.
func (s *Server) silenceAlert(ctx *fasthttp.RequestCtx, p *Principal) error {
	a, err := s.alertTarget(ctx, p, true)
	if err != nil {
		return err
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(ctx.PostBody(), &in); err != nil || in == nil {
		return alertErr(&alerts.FieldError{Field: "body", Message: "send {\"until\": \"<RFC 3339 time>\"}, or null to lift the silence"})
	}
	raw, ok := in["until"]
	if !ok {
		return alertErr(&alerts.FieldError{Field: "until", Message: "until is required: an RFC 3339 time, or null to lift the silence"})
	}
	var until *time.Time
	if string(raw) != "null" {
		var t time.Time
		if err := json.Unmarshal(raw, &t); err != nil {
			return alertErr(&alerts.FieldError{Field: "until", Message: "until must be an RFC 3339 time, or null to lift the silence"})
		}
		t = t.UTC()
		until = &t
	}
	v, err := s.deps.Alerts.Silence(s.work(), a, until)
	if err != nil {
		return alertErr(err)
	}
	writeJSON(ctx, 200, v)
	return nil
}

func (s *Server) alertHistory(ctx *fasthttp.RequestCtx, p *Principal) error {
	a, err := s.alertTarget(ctx, p, false)
	if err != nil {
		return err
	}
	limit := 100
	if raw := ctx.QueryArgs().Peek("limit"); len(raw) > 0 {
		n, err := strconv.Atoi(string(raw))
		if err != nil {
			return alertErr(&alerts.FieldError{Field: "limit", Message: "limit must be a whole number from 1 to 1000"})
		}
		limit = n
	}
	h, err := s.deps.Alerts.History(s.work(), a, limit)
	if err != nil {
		return alertErr(err)
	}
	writeJSON(ctx, 200, map[string]any{"history": h})
	return nil
}
