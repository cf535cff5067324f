package main

import (
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// installApp installs an app in the default cluster as the bootstrap administrator
// (svcd started with SVC_BOOTSTRAP_PASSWORD=adminPassword).
func installApp(t *testing.T, s *svcdtest.Service, app string) {
	t.Helper()
	s.Must(200, "PUT", "/v1/apps/"+app+appScope, nil, "Authorization", "Bearer "+login(t, s, "admin", adminPassword))
}

type appState struct {
	ID, Name  string
	Installed bool
}

// TestAppsInstallUninstallAndGating: clusters start with no app; PUT and DELETE are
// idempotent, for organization admins only, never API keys; every log-search endpoint
// is gated; uninstalling keeps ingested rows and saved searches, reinstalling restores
// them, and SQL is never gated.
func TestAppsInstallUninstallAndGating(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	admin := "Bearer " + login(t, s, "admin", adminPassword)
	key := "Bearer " + s.AdminKey
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "ann", "password": "ann's password"}, "Authorization", admin)
	joinByInvitation(t, s, strings.TrimPrefix(admin, "Bearer "), "default", "ann", "ann's password", "member")
	ann := "Bearer " + login(t, s, "ann", "ann's password")

	list := func(who string) map[string]bool {
		var res struct{ Apps []appState }
		s.Must(200, "GET", "/v1/apps"+appScope, nil, "Authorization", who).JSON(t, &res)
		out := map[string]bool{}
		for _, a := range res.Apps {
			out[a.ID] = a.Installed
		}
		return out
	}
	if got := list(ann); len(got) != 3 || got["opentelemetry"] || got["prometheus"] || got["logsearch"] {
		t.Fatalf("a new cluster's apps: %v", got)
	}
	s.Must(403, "GET", "/v1/apps"+appScope, nil, "Authorization", key)
	s.Must(403, "PUT", "/v1/apps/logsearch"+appScope, nil, "Authorization", key)
	s.Must(403, "PUT", "/v1/apps/logsearch"+appScope, nil, "Authorization", ann)
	s.Must(403, "DELETE", "/v1/apps/logsearch"+appScope, nil, "Authorization", ann)
	s.Must(404, "PUT", "/v1/apps/nope"+appScope, nil, "Authorization", admin)
	s.Must(400, "PUT", "/v1/apps/logsearch", nil, "Authorization", admin)

	// Every gated endpoint refuses while the app is not installed.
	search := map[string]string{"spl": "*", "earliest": "0"}
	event := `{"event": "hello", "time": 1700000000}`
	gatedCalls := func(want int) {
		t.Helper()
		r := s.Must(want, "POST", "/services/collector/event", event, "Authorization", "Splunk "+s.AdminKey)
		if want == 403 && (!strings.Contains(string(r.Body), `"code":1`) || !strings.Contains(string(r.Body), "PUT /v1/apps/logsearch")) {
			t.Fatalf("HEC without the app: %s", r.Body)
		}
		if want == 403 {
			s.Must(403, "POST", "/services/collector/raw", "raw line", "Authorization", "Splunk "+s.AdminKey)
			for _, c := range [][3]string{{"POST", "/v1/spl/search", key}, {"GET", "/v1/apps/logsearch/searches" + appScope, ann},
				{"POST", "/v1/apps/logsearch/searches" + appScope, ann}} {
				var body any
				if c[0] == "POST" {
					body = search
				}
				r := s.Must(403, c[0], c[1], body, "Authorization", c[2])
				if !strings.Contains(string(r.Body), "app_not_installed") || !strings.Contains(string(r.Body), "PUT /v1/apps/logsearch") {
					t.Fatalf("%s %s without the app: %s", c[0], c[1], r.Body)
				}
			}
		}
	}
	gatedCalls(403)

	// Install twice: one state, both answers the same.
	for range 2 {
		var a appState
		s.Must(200, "PUT", "/v1/apps/logsearch"+appScope, nil, "Authorization", admin).JSON(t, &a)
		if a.ID != "logsearch" || !a.Installed || a.Name == "" {
			t.Fatalf("install answer: %+v", a)
		}
	}
	if got := list(ann); !got["logsearch"] || got["opentelemetry"] {
		t.Fatalf("after install: %v", got)
	}
	gatedCalls(200)
	s.WaitCount("logsearch_events", 1, time.Minute)
	var saved struct{ ID string }
	s.Must(201, "POST", "/v1/apps/logsearch/searches"+appScope, map[string]any{"name": "all", "spl": "*"}, "Authorization", ann).JSON(t, &saved)
	s.Must(200, "POST", "/v1/spl/search", search, "Authorization", key)

	// Uninstall twice; the gated endpoints refuse again; data and SQL stay.
	for range 2 {
		var a appState
		s.Must(200, "DELETE", "/v1/apps/logsearch"+appScope, nil, "Authorization", admin).JSON(t, &a)
		if a.Installed {
			t.Fatalf("uninstall answer: %+v", a)
		}
	}
	gatedCalls(403)
	s.Must(403, "GET", "/v1/apps/logsearch/searches/"+saved.ID+appScope, nil, "Authorization", ann)
	if n := s.Count("logsearch_events"); n != 1 {
		t.Fatalf("SQL after uninstall: %d rows, want 1", n)
	}

	// Reinstall: the saved search and the rows are back.
	s.Must(200, "PUT", "/v1/apps/logsearch"+appScope, nil, "Authorization", admin)
	s.Must(200, "GET", "/v1/apps/logsearch/searches/"+saved.ID+appScope, nil, "Authorization", ann)
	var res struct{ Rows int }
	s.Must(200, "POST", "/v1/spl/search", search, "Authorization", key).JSON(t, &res)
	if res.Rows != 1 {
		t.Fatalf("search after reinstall: %d rows, want 1", res.Rows)
	}
	// Install state survives a restart (it is control-plane events).
	s.Restart()
	if got := list(ann); !got["logsearch"] || got["opentelemetry"] || got["prometheus"] {
		t.Fatalf("after restart: %v", got)
	}
}
