package tables

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// OTLPTables are the OpenTelemetry app's tables: the signals' default table names. A
// table an exporter names with x-service-<signal>-table is an ordinary table; its
// retention is its own (PATCH /v1/tables/{table}).
var OTLPTables = []string{"traces", "logs", "metrics"}

// appOfTable is the app whose retention setting a catalog table named name follows, ""
// for none.
func appOfTable(name string) string {
	switch {
	case name == LogSearchTable:
		return catalog.AppLogsearch
	case slices.Contains(OTLPTables, name):
		return catalog.AppOpenTelemetry
	}
	return ""
}

// defaultRetention is the retention a table created without one gets: its app's setting
// when it is an app's table and the app has one, else its database's default.
func (m *Manager) defaultRetention(d *catalog.Database, name string) string {
	if app := appOfTable(name); app != "" {
		if r := m.cat.Model().AppRetention(d.ClusterID, app); r != "" {
			return r
		}
	}
	return d.Retention
}

// AppTableRetention is one app table's retention as the engine enforces it.
type AppTableRetention struct {
	Database string
	Table    string
	State    RetentionState
}

// SetAppRetention records an app's retention setting in a cluster and applies it to the
// app's tables in every database: logsearch_events (log search), the signals' default
// tables (OpenTelemetry; a duration or an expression, as for any table), the sample,
// histogram and exemplar tables (Prometheus; a duration, on each sample's timestamp).
// Tables the app creates later get it too. It answers the tables' retention read back
// from the engine.
func (m *Manager) SetAppRetention(ctx context.Context, cluster uuid.UUID, app, retention string) ([]AppTableRetention, error) {
	columnType := "JSON"
	if app == catalog.AppLogsearch {
		columnType = LogSearchColumnType
	}
	r, canonical, err := ParseRetention(retention, columnType)
	if err != nil {
		return nil, &catalog.FieldError{Field: "retention", Message: err.Error()}
	}
	if app == catalog.AppPrometheus && r != nil && r.Path != timePath(columnType) {
		return nil, &catalog.FieldError{Field: "retention",
			Message: "the Prometheus app's retention is a duration (30d): samples are deleted by their timestamp"}
	}
	if err := m.cat.SetAppRetention(ctx, cluster, app, canonical); err != nil {
		return nil, err
	}
	if app == catalog.AppPrometheus {
		return m.prometheusRetention(ctx, cluster, r)
	}
	var out []AppTableRetention
	var changed []*catalog.Table
	for _, d := range m.cat.Model().Databases(cluster) {
		for _, t := range m.cat.Model().Tables(cluster, d.Name) {
			if appOfTable(t.Name) != app {
				continue
			}
			t, err := m.ChangeRetention(ctx, cluster, d.Name, t.Name, canonical)
			if err != nil {
				return nil, fmt.Errorf("table %s.%s: %w", d.Name, t.Name, err)
			}
			changed = append(changed, t)
		}
	}
	states := m.ReadRetention(ctx, cluster, changed)
	for _, t := range changed {
		out = append(out, AppTableRetention{Database: t.Database, Table: t.Name, State: states[t.ID]})
	}
	return out, nil
}

// prometheusRetention sets the TTL of the Prometheus app's timed tables in every database
// that has them, and reads them back.
func (m *Manager) prometheusRetention(ctx context.Context, cluster uuid.UUID, r *Retention) ([]AppTableRetention, error) {
	e, err := m.engines.Engine(cluster)
	if err != nil {
		return nil, err
	}
	want := func(table string) string {
		if r == nil {
			return ""
		}
		return promstore.TableTTL(table, r.Seconds)
	}
	var out []AppTableRetention
	for _, d := range m.cat.Model().Databases(cluster) {
		have, err := engineTables(ctx, e, d.Engine)
		if err != nil {
			return nil, err
		}
		for _, name := range promstore.RetainedTables {
			full, ok := have[name]
			if !ok {
				continue
			}
			table := sqlquote.Ident(d.Engine) + "." + sqlquote.Ident(name)
			switch current := EngineTTL(full); {
			case current == want(name):
			case want(name) == "":
				err = e.Exec(ctx, "ALTER TABLE "+table+" REMOVE TTL")
			default:
				err = e.Exec(ctx, "ALTER TABLE "+table+" MODIFY TTL "+want(name))
			}
			if err != nil {
				return nil, fmt.Errorf("set the retention of %s.%s: %w", d.Name, name, err)
			}
		}
		if have, err = engineTables(ctx, e, d.Engine); err != nil {
			return nil, err
		}
		for _, name := range promstore.RetainedTables {
			if full, ok := have[name]; ok {
				out = append(out, AppTableRetention{Database: d.Name, Table: name, State: promState(name, full, r)})
			}
		}
	}
	return out, nil
}

// promState compares a Prometheus table's engine TTL with the app's retention r.
func promState(table, engineFull string, r *Retention) RetentionState {
	ttl := EngineTTL(engineFull)
	st := RetentionState{TTL: ttl, Status: RetentionInSync}
	want := ""
	if r != nil {
		st.Setting = r.Text("JSON")
		want = promstore.TableTTL(table, r.Seconds)
	}
	column, _, _ := strings.Cut(promstore.TableTTL(table, 0), " ")
	if rest, ok := strings.CutPrefix(ttl, column+" + toIntervalSecond("); ok {
		var secs int64
		if _, err := fmt.Sscanf(rest, "%d)", &secs); err == nil && promstore.TableTTL(table, secs) == ttl {
			st.Engine = (&Retention{Path: DefaultTimePath, Seconds: secs}).Text("JSON")
		}
	} else if ttl != "" {
		st.Engine = ttl
	}
	if ttl != want {
		st.Status = RetentionMismatch
		st.Problem = fmt.Sprintf("the engine's TTL is %q, the setting asks for %q", ttl, want)
	}
	return st
}

// PrometheusDDL is promstore's DDL with the cluster's Prometheus retention (the
// consumer creates the app's tables on a database's first samples).
func (m *Manager) PrometheusDDL(cluster uuid.UUID) func(db string) []string {
	return func(db string) []string {
		r, _, err := ParseRetention(m.cat.Model().AppRetention(cluster, catalog.AppPrometheus), "JSON")
		if err != nil || r == nil {
			return promstore.DDL(db)
		}
		return promstore.DDLKeeping(db, r.Seconds)
	}
}
