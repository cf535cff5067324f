package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Apps a cluster can install (SPEC: Apps). Installing one enables its endpoints; it never
// changes the cluster's lifecycle state, and uninstalling keeps the app's data.
const (
	AppOpenTelemetry = "opentelemetry"
	AppPrometheus    = "prometheus"
	AppLogsearch     = "logsearch"
)

// App is an installable app as the API lists it.
type App struct {
	ID   string
	Name string
}

// Apps lists the apps in the order the API shows them.
var Apps = []App{
	{AppOpenTelemetry, "OpenTelemetry"},
	{AppPrometheus, "Prometheus"},
	{AppLogsearch, "Log search"},
}

// AppByID returns a known app.
func AppByID(id string) (App, bool) {
	for _, a := range Apps {
		if a.ID == id {
			return a, true
		}
	}
	return App{}, false
}

// Events of a cluster's apps stream (one stream per cluster, appended at its version).
const (
	EvAppInstalled   = "app.installed"
	EvAppUninstalled = "app.uninstalled"
	// EvAppsAdopted opens the apps stream of a cluster created before apps existed,
	// with the apps it already used (AdoptApps).
	EvAppsAdopted = "apps.adopted"
)

func appsStream(cluster uuid.UUID) string { return "apps-" + cluster.String() }

// AppChanged is an app installed in or uninstalled from a cluster.
type AppChanged struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	App       string    `json:"app"`
}

// AppsAdopted is the starting state of a cluster that predates apps.
type AppsAdopted struct {
	ClusterID uuid.UUID `json:"cluster_id"`
	Installed []string  `json:"installed"`
}

type appModel struct {
	apps map[uuid.UUID]map[string]bool // cluster -> installed apps
	// retention is each app's retention setting by cluster (EvAppRetentionChanged).
	retention map[uuid.UUID]map[string]string
	// appsOpened holds clusters whose apps stream exists.
	appsOpened map[uuid.UUID]bool
}

func (m *appModel) set(cluster uuid.UUID, app string, on bool) {
	if m.apps == nil {
		m.apps, m.appsOpened = map[uuid.UUID]map[string]bool{}, map[uuid.UUID]bool{}
	}
	m.appsOpened[cluster] = true
	if m.apps[cluster] == nil {
		m.apps[cluster] = map[string]bool{}
	}
	if on {
		m.apps[cluster][app] = true
	} else {
		delete(m.apps[cluster], app)
	}
}

func (m *Model) applyApps(e es.Event) (bool, error) {
	switch e.Type {
	case EvAppInstalled, EvAppUninstalled:
		v, err := decode[AppChanged](e)
		if err != nil {
			return true, err
		}
		m.set(v.ClusterID, v.App, e.Type == EvAppInstalled)
	case EvAppRetentionChanged:
		v, err := decode[AppRetentionChanged](e)
		if err != nil {
			return true, err
		}
		// Copy on write: readers hold the previous map.
		next := map[uuid.UUID]map[string]string{}
		for c, apps := range m.retention {
			next[c] = apps
		}
		apps := map[string]string{}
		for a, r := range next[v.ClusterID] {
			apps[a] = r
		}
		apps[v.App] = v.Retention
		next[v.ClusterID] = apps
		m.retention = next
	case EvAppsAdopted:
		v, err := decode[AppsAdopted](e)
		if err != nil {
			return true, err
		}
		m.set(v.ClusterID, "", false)
		for _, a := range v.Installed {
			m.set(v.ClusterID, a, true)
		}
	default:
		return false, nil
	}
	return true, nil
}

// AppInstalled reports whether app is installed in cluster.
func (m *Model) AppInstalled(cluster uuid.UUID, app string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.apps[cluster][app]
}

// SetApp installs (on) or uninstalls an app of a cluster. It is idempotent: when the app
// is already in the asked state nothing is written. The cluster's apps stream is
// appended at the version the decision was made on, so concurrent changes are ordered.
func (s *Service) SetApp(ctx context.Context, cluster uuid.UUID, app string, on bool) error {
	if _, ok := AppByID(app); !ok {
		return fmt.Errorf("%w: app %q", ErrNotFound, app)
	}
	if _, ok := s.model.Cluster(cluster); !ok {
		return fmt.Errorf("%w: cluster %s", ErrNotFound, cluster)
	}
	typ := EvAppUninstalled
	if on {
		typ = EvAppInstalled
	}
	return s.retry(ctx, func() (uint64, error) {
		events, err := es.Collect(ctx, s.store.ReadStream(ctx, appsStream(cluster), 0))
		if err != nil {
			return 0, err
		}
		var st appModel
		for _, e := range events {
			if _, err := st.applyTo(e); err != nil {
				return 0, err
			}
		}
		if st.apps[cluster][app] == on {
			return 0, nil // already so: a repeated PUT or DELETE writes nothing
		}
		exp := es.NoStream()
		if len(events) > 0 {
			exp = es.Exact(events[len(events)-1].Version)
		}
		return s.append(ctx, appsStream(cluster), exp, newEvent(typ, AppChanged{ClusterID: cluster, App: app}))
	})
}

// applyTo folds one apps event into a standalone state (the command side's aggregate).
func (st *appModel) applyTo(e es.Event) (bool, error) {
	m := &Model{appModel: *st}
	ok, err := m.applyApps(e)
	*st = m.appModel
	return ok, err
}

// AdoptApps is the upgrade path for data directories made before apps existed: a cluster
// created without an apps stream gets one, with `logsearch` installed when the cluster
// already uses log search (a logsearch_events table in any database, or saved
// searches), and nothing else. It runs at start, before requests are served; a cluster
// whose stream exists (adopted by another node, or changed since) is left alone.
func (s *Service) AdoptApps(ctx context.Context) error {
	for _, c := range s.model.AllClusters() {
		if c.AppsTracked || s.model.appsOpen(c.ID) {
			continue
		}
		installed := []string{}
		if s.model.usesLogsearch(c) {
			installed = append(installed, AppLogsearch)
		}
		pos, err := s.append(ctx, appsStream(c.ID), es.NoStream(), newEvent(EvAppsAdopted, AppsAdopted{ClusterID: c.ID, Installed: installed}))
		if errors.Is(err, es.ErrConcurrency) {
			continue
		}
		if err == nil {
			err = s.proj.WaitFor(ctx, pos)
		}
		if err != nil {
			return fmt.Errorf("adopt apps of cluster %s: %w", c.Name, err)
		}
	}
	return nil
}

func (m *Model) appsOpen(cluster uuid.UUID) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.appsOpened[cluster]
}

// logsearchTable is the table log search reads and HEC writes (edge/ingest.LogsearchTable).
const logsearchTable = "logsearch_events"

func (m *Model) usesLogsearch(c *Cluster) bool {
	if len(m.SavedSearches(c.OrgID, c.ID)) > 0 {
		return true
	}
	for _, d := range m.Databases(c.ID) {
		if _, ok := m.Table(c.ID, d.Name, logsearchTable); ok {
			return true
		}
	}
	return false
}

// Sync applies every event already stored to the read model, so that the caller reads
// what a concurrent command committed: a command that lost a creation race (ErrExists)
// syncs before reading the winner's object.
func (s *Service) Sync(ctx context.Context) error {
	_, err := s.proj.CatchUp(ctx)
	return err
}
