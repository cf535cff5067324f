package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestAppCLI manages a cluster's apps through svc against a real svcd as a user with an
// OAuth token (API keys cannot manage apps): list, idempotent install and uninstall, an
// unknown app's 404, an API key's 403, the cluster selection rules, and log search
// gated by the logsearch app.
func TestAppCLI(t *testing.T) {
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	c := newCLI(t, s)
	c.saveLogin(t, config{Token: userToken(t, s), TokenType: tokenOAuth, Org: "default"})
	installed := func(v map[string]any) map[string]bool {
		t.Helper()
		out := map[string]bool{}
		items, _ := v["apps"].([]any)
		for _, it := range items {
			id, _ := field(it, "id").(string)
			on, ok := field(it, "installed").(bool)
			if id == "" || !ok || field(it, "name") == nil {
				t.Fatalf("app list item: %v", it)
			}
			out[id] = on
		}
		return out
	}
	none := map[string]bool{"opentelemetry": false, "prometheus": false, "logsearch": false}
	if got := installed(c.ok("app", "list")); !reflect.DeepEqual(got, none) {
		t.Fatalf("apps of a new cluster: %v", got)
	}
	// Log search is refused until the app is installed; the error names the app.
	e := c.fails(1, "search", "search *")
	if e["status"] != 403.0 || field(e["error"], "code") != "app_not_installed" ||
		!strings.Contains(field(e["error"], "hint").(string), "/v1/apps/logsearch") {
		t.Fatalf("search without the app: %v", e)
	}

	// install is idempotent: twice, the same answer, one app installed.
	for range 2 {
		if v := c.ok("app", "install", "logsearch"); v["id"] != "logsearch" || v["installed"] != true {
			t.Fatalf("app install: %v", v)
		}
	}
	want := map[string]bool{"opentelemetry": false, "prometheus": false, "logsearch": true}
	if got := installed(c.ok("app", "list")); !reflect.DeepEqual(got, want) {
		t.Fatalf("apps after install: %v", got)
	}
	s.Must(200, "POST", "/services/collector/event", `{"event":{"msg":"app installed"}}`, "Authorization", "Splunk "+s.AdminKey)
	waitUntil(t, "the event to be searchable", time.Minute, func() bool {
		out, _, code := c.run("search", "search msg=\"app installed\"", "--earliest", "0")
		var v map[string]any
		if code != 0 || jsonUnmarshal(out, &v) != nil {
			return false
		}
		data, _ := v["data"].([]any)
		return len(data) == 1
	})

	// An unknown app is the API's 404; a missing argument is usage (exit 2).
	if e := c.fails(1, "app", "install", "nope"); e["status"] != 404.0 || field(e["error"], "code") != "app_not_found" {
		t.Fatalf("unknown app: %v", e)
	}
	c.fails(2, "app", "install")

	// An API key cannot manage apps: the API's 403, exit 1 (not an authentication failure).
	for _, args := range [][]string{{"app", "list"}, {"app", "install", "prometheus"}, {"app", "uninstall", "logsearch"}} {
		if e := c.with("SERVICE_API_KEY="+s.AdminKey).fails(1, args...); e["status"] != 403.0 {
			t.Fatalf("svc %v with an API key: %v", args, e)
		}
	}

	// uninstall is idempotent too, and log search is refused again.
	for range 2 {
		if v := c.ok("app", "uninstall", "logsearch"); v["id"] != "logsearch" || v["installed"] != false {
			t.Fatalf("app uninstall: %v", v)
		}
	}
	if got := installed(c.ok("app", "list")); !reflect.DeepEqual(got, none) {
		t.Fatalf("apps after uninstall: %v", got)
	}
	if e := c.fails(1, "search", "search *"); e["status"] != 403.0 || field(e["error"], "code") != "app_not_installed" {
		t.Fatalf("search after uninstall: %v", e)
	}

	// Selection: with two clusters the cluster must be named (exit 2, choices on stdout);
	// --cluster and SERVICE_CLUSTER name it, and apps are per cluster.
	first := names(c.ok("cluster", "list"), "clusters")[0]
	c.ok("cluster", "create", "second")
	out, _, code := c.run("app", "list")
	var needs map[string]any
	if code != 2 || jsonUnmarshal(out, &needs) != nil || needs["needs"] != "cluster" || len(needs["choices"].([]any)) != 2 {
		t.Fatalf("needs cluster: exit %d, stdout %s", code, out)
	}
	c.ok("app", "install", "prometheus", "--cluster", "second")
	if got := installed(c.with("SERVICE_CLUSTER=second").ok("app", "list")); !got["prometheus"] {
		t.Fatalf("apps of second: %v", got)
	}
	if got := installed(c.ok("app", "list", "--cluster", first)); !reflect.DeepEqual(got, none) {
		t.Fatalf("apps of %s after installing in second: %v", first, got)
	}
}
