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

// alertPermit lets the caller save an alert in a language when it may use that
// language's own endpoint: a search alert needs what POST /v1/spl/search needs (the
// log-search app and maySearch). SQL and PromQL alerts run as the organization, which
// the alert routes' own access (organization administrators) covers.
func (s *Server) alertPermit(p *Principal) alerts.Permit {
	return func(language string) error {
		if language != alerts.LangSPL {
			return nil
		}
		if err := s.requireApp(p, catalog.AppLogsearch); err != nil {
			return err
		}
		return maySearch(p)
	}
}

func alertErr(err error) error {
	var fe *alerts.FieldError
	var api *APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &api):
		return api
	case errors.As(err, &fe):
		code := fe.Code
		if code == "" {
			code = "invalid_" + codeWord(fe.Field)
		}
		return &APIError{Status: 400, Code: code, Field: fe.Field, Message: fe.Message, Hint: fe.Hint}
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
	v, err := s.deps.Alerts.Create(s.work(), p.OrgID, p.ClusterID, ctx.PostBody(), s.alertPermit(p))
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
	v, err := s.deps.Alerts.Update(s.work(), a, ctx.PostBody(), s.alertPermit(p))
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

// promRules serves the Prometheus app's /rules and /alerts (Prometheus's shape, for
// Grafana): the PromQL alerts over the selected database. Readers of the database may
// see them (the query API's readers); custom-role keys may not (a rule's query can name
// series a role does not grant). Nothing secret is in them: no destination is shown.
func (s *Server) promRules(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actQuery) {
		return forbidden("read alerting rules (a readable key or an organization member is needed)")
	}
	if p.CustomRole() {
		return forbidden("read alerting rules; custom-role keys are not supported there")
	}
	db, err := s.database(ctx, p)
	if err != nil {
		return err
	}
	if s.deps.Alerts == nil || s.deps.Alerts.Available(s.work()) != nil {
		writePromError(ctx, 503, "unavailable", "alerts are not available on this deployment (the workflow service is off or unreachable)")
		return nil
	}
	groups := s.deps.Alerts.Rules(s.work(), p.ClusterID, db.Name)
	if string(ctx.Path()) == "/prometheus/api/v1/alerts" {
		list := []alerts.PromAlert{}
		for _, g := range groups {
			for _, r := range g.Rules {
				list = append(list, r.Alerts...)
			}
		}
		writeJSON(ctx, 200, map[string]any{"status": "success", "data": map[string]any{"alerts": list}})
		return nil
	}
	writeJSON(ctx, 200, map[string]any{"status": "success", "data": map[string]any{"groups": groups}})
	return nil
}
