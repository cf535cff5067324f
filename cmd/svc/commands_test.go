package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// TestCLI runs every command against one real svcd, parsing each JSON result, then the
// selection rules: needs with two organizations and every resolution-order case.
func TestCLI(t *testing.T) {
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 100 {
			fmt.Fprintf(w, "{\"i\":%d}\n", i)
		}
	}))
	defer src.Close()
	s := svcdtest.Start(t, "SVC_BOOTSTRAP_PASSWORD="+adminPassword, "SVC_URL_IMPORT_ALLOW=127.0.0.1/32")
	user := userToken(t, s)

	t.Run("commands", func(t *testing.T) {
		c := newCLI(t, s)
		login := c.ok("login", "--api-key", s.AdminKey)
		if login["logged_in"] != true || login["credential"] != "api_key" {
			t.Fatalf("login: %v", login)
		}
		st, err := os.Stat(filepath.Join(c.cfgDir, "svc", "config.json"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("config file: %v %v", st, err)
		}
		if v := c.ok("whoami"); v["credential"] != "api_key" {
			t.Fatalf("whoami: %v", v)
		}
		if got := names(c.ok("org", "list"), "organizations"); !reflect.DeepEqual(got, []string{"default"}) {
			t.Fatalf("org list: %v", got)
		}
		if got := names(c.ok("db", "list"), "databases"); !slices.Contains(got, "default") {
			t.Fatalf("db list: %v", got)
		}
		if v := c.ok("db", "create", "analytics", "--retention", "90d"); v["name"] != "analytics" || v["retention"] != "90d" {
			t.Fatalf("db create: %v", v)
		}
		if v := c.ok("db", "retention", "analytics", "30d"); v["retention"] != "30d" {
			t.Fatalf("db retention: %v", v)
		}
		a := c.with("SERVICE_DATABASE=analytics")
		if v := a.ok("table", "create", "events", "--sorting-key", "user"); v["name"] != "events" || v["database"] != "analytics" {
			t.Fatalf("table create: %v", v)
		}
		if got := names(a.ok("table", "list"), "tables"); !reflect.DeepEqual(got, []string{"events"}) {
			t.Fatalf("table list: %v", got)
		}
		if v := a.ok("table", "alter-key", "events", "user, n"); v["name"] != "events" || v["retention_setting"] != "30d" {
			t.Fatalf("alter-key (the database's retention inherited): %v", v)
		}
		if v := a.ok("table", "retention", "events", "ts + INTERVAL 7 DAY"); v["retention_setting"] != "ts + INTERVAL 7 DAY" {
			t.Fatalf("table retention: %v", v)
		}
		if v := a.ok("table", "create", "kept", "--retention", ""); v["retention_setting"] != nil {
			t.Fatalf("table create --retention \"\": %v", v)
		}
		if v := a.ok("table", "describe", "events"); !strings.Contains(v["sorting_key"].(string), "n") {
			t.Fatalf("describe: %v", v)
		}
		rows := filepath.Join(t.TempDir(), "rows.csv")
		os.WriteFile(rows, []byte("user,n\nann,1\nbob,2\nann,3\n"), 0o644)
		if v := a.ok("ingest", "events", rows); v["rows"] != 3.0 {
			t.Fatalf("ingest: %v", v)
		}
		waitUntil(t, "3 rows", time.Minute, func() bool {
			out, _, code := a.run("query", "--format", "JSONEachRow", "SELECT count() AS n FROM events")
			return code == 0 && strings.TrimSpace(out) == `{"n":"3"}` || strings.TrimSpace(out) == `{"n":3}`
		})
		q := a.ok("query", "SELECT * FROM events")
		users := map[any]int{}
		for _, r := range q["data"].([]any) {
			users[field(field(r, "doc"), "user")]++
		}
		if q["rows"] != 3.0 || users["ann"] != 2 || users["bob"] != 1 {
			t.Fatalf("query: %v", q)
		}
		// Gzipped JSON arrays, TSV and NDJSON on stdin; SQL from a file and from stdin.
		dir := t.TempDir()
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(`[{"user": "cy", "n": 4},` + "\n" + `{"user": "cy", "n": 5}]`))
		zw.Close()
		os.WriteFile(filepath.Join(dir, "more.json.gz"), gz.Bytes(), 0o644)
		os.WriteFile(filepath.Join(dir, "more.tsv"), []byte("user\tn\ndee\t6\n"), 0o644)
		if v := a.ok("ingest", "events", filepath.Join(dir, "more.json.gz"), filepath.Join(dir, "more.tsv")); v["rows"] != 3.0 {
			t.Fatalf("ingest gz and tsv: %v", v)
		}
		cmd := a.command("ingest", "events")
		cmd.Stdin = strings.NewReader(`{"user": "eve", "n": 7}` + "\n\n" + `{"user": "eve", "n": 8}` + "\n")
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"rows": 2`) {
			t.Fatalf("ingest from stdin: %v %s", err, out)
		}
		os.WriteFile(filepath.Join(dir, "q.sql"), []byte("SELECT count() AS n FROM events"), 0o644)
		waitUntil(t, "8 rows", time.Minute, func() bool {
			out, _, code := a.run("query", "--format", "CSV", "--file", filepath.Join(dir, "q.sql"))
			return code == 0 && strings.TrimSpace(out) == "8"
		})
		cmd = a.command("query", "--format", "TSVWithNames")
		cmd.Stdin = strings.NewReader("SELECT count() AS n FROM events")
		if out, err := cmd.Output(); err != nil || string(out) != "n\n8\n" {
			t.Fatalf("query from stdin: %v %q", err, out)
		}
		// --transform sends each file whole (gzipped as it is) in the transform's format.
		var trail bytes.Buffer
		zw = gzip.NewWriter(&trail)
		zw.Write([]byte(`{"Records": [{"eventName": "StartLogging", "eventTime": "2023-07-19T21:33:41Z"}, {"eventName": "StopLogging"}]}`))
		zw.Close()
		os.WriteFile(filepath.Join(dir, "trail.json.gz"), trail.Bytes(), 0o644)
		a.ok("table", "create", "trail")
		if v := a.ok("ingest", "trail", filepath.Join(dir, "trail.json.gz"), "--transform", "cloudtrail"); v["rows"] != 2.0 || v["chunks"] != 1.0 {
			t.Fatalf("ingest --transform: %v", v)
		}
		a.ok("table", "create", "imported")
		if v := a.ok("ingest", "imported", "--from-url", src.URL+"/rows.ndjson"); v["inserted"] != 100.0 {
			t.Fatalf("ingest --from-url: %v", v)
		}
		key := a.ok("key", "create", "reader", "--permission", "read_only")
		id, _ := key["id"].(string)
		if id == "" || !strings.HasPrefix(key["token"].(string), "svck_") {
			t.Fatalf("key create: %v", key)
		}
		if got := names(a.ok("key", "list"), "keys"); !slices.Contains(got, "reader") {
			t.Fatalf("key list: %v", got)
		}
		a.ok("key", "delete", id)
		a.ok("table", "delete", "events")
		a.ok("db", "delete", "analytics")
		// The size catalog is for users; an API key is refused (SPEC: Clusters).
		if e := c.fails(1, "cluster", "sizes"); e["status"] != 403.0 {
			t.Fatalf("sizes with an API key: %v", e)
		}
		out, _, code := c.run("completion", "bash")
		if code != 0 || !strings.Contains(out, "svc") {
			t.Fatalf("completion: %d %.100s", code, out)
		}
		// Failures: JSON on stderr and the documented exit codes.
		if e := c.fails(1, "table", "describe", "missing"); e["status"] != 404.0 {
			t.Fatalf("404: %v", e)
		}
		c.fails(2, "no-such-command")
		c.fails(2, "table", "create")
		c.fails(4, "--api-key", "svck_wrong_wrong_wrong_wrong", "table", "list")
		c.ok("logout")
		c.fails(4, "table", "list")
	})

	t.Run("user-commands", func(t *testing.T) {
		c := newCLI(t, s)
		c.saveLogin(t, config{Token: user, TokenType: tokenOAuth})
		if v := c.ok("whoami"); field(v, "user") == nil || v["credential"] != "oauth" {
			t.Fatalf("whoami: %v", v)
		}
		if v := c.ok("org", "create", "scratch"); v["name"] != "scratch" {
			t.Fatalf("org create: %v", v)
		}
		c.ok("org", "get", "scratch")
		c.ok("org", "rename", "scratch", "scratch2")
		c.ok("org", "delete", "scratch2")
		clusters := c.with("SERVICE_ORG=default").ok("cluster", "list")
		cl := names(clusters, "clusters")
		if len(cl) != 1 {
			t.Fatalf("clusters: %v", clusters)
		}
		if v := c.with("SERVICE_ORG=default").ok("cluster", "get", cl[0]); v["name"] != cl[0] {
			t.Fatalf("cluster get: %v", v)
		}
		if v := c.ok("cluster", "sizes"); v["sizes"] == nil {
			t.Fatalf("sizes: %v", v)
		}
		sel := c.ok("org", "select", "default")
		if field(sel, "selected").(map[string]any)["org"] != "default" {
			t.Fatalf("org select: %v", sel)
		}
		c.ok("cluster", "select", cl[0])
		c.ok("db", "select", "default")
		// Log search is an app: install it in the selected cluster (a user; the administrator).
		c.ok("app", "install", "logsearch")
		s.Must(200, "POST", "/services/collector/event", `{"event":{"status":503,"msg":"down"}}`, "Authorization", "Splunk "+s.AdminKey)
		waitUntil(t, "the event to be searchable", time.Minute, func() bool {
			out, _, code := c.run("search", "search status>=500", "--earliest", "0", "--latest", "now", "--field-stats")
			var v map[string]any
			if code != 0 || jsonUnmarshal(out, &v) != nil {
				return false
			}
			data, _ := v["data"].([]any)
			return len(data) == 1 && field(data[0], "msg") == "down" && v["field_statistics"] != nil
		})
		ss := c.ok("saved-search", "create", "errors", "search status>=500", "--earliest", "-1h")
		id, _ := ss["id"].(string)
		if id == "" {
			t.Fatalf("saved-search create: %v", ss)
		}
		if got := names(c.ok("saved-search", "list"), "searches"); !slices.Contains(got, "errors") {
			t.Fatalf("saved-search list: %v", got)
		}
		c.ok("saved-search", "update", id, "--name", "server errors")
		if v := c.ok("saved-search", "get", id); v["name"] != "server errors" {
			t.Fatalf("saved-search get: %v", v)
		}
		c.ok("saved-search", "delete", id)
		if v := c.ok("logout"); v["revoked"] != true {
			t.Fatalf("logout: %v", v)
		}
		if r, _ := s.Do("GET", "/v1/me", nil, "Authorization", "Bearer "+user); r.Status != 401 {
			t.Fatalf("the session still works after logout: %d", r.Status)
		}
	})

	t.Run("selection", func(t *testing.T) {
		tok := userToken(t, s)
		c := newCLI(t, s)
		c.saveLogin(t, config{Token: tok, TokenType: tokenOAuth})
		// Two organizations and no selection: needs org, exit 2, choices on stdout.
		c.ok("org", "create", "second")
		out, _, code := c.run("db", "list")
		var needs map[string]any
		if code != 2 || jsonUnmarshal(out, &needs) != nil || needs["needs"] != "org" ||
			!reflect.DeepEqual(needs["choices"], []any{"default", "second"}) {
			t.Fatalf("needs org: exit %d, stdout %s", code, out)
		}
		// Organization: --org, then SERVICE_ORG, then the saved selection.
		c.saveLogin(t, config{Token: tok, TokenType: tokenOAuth, Org: "second"})
		orgOf := func(c *cli, args ...string) string {
			v := c.ok(append([]string{"whoami"}, args...)...)
			return field(v, "selected").(map[string]any)["org"].(string)
		}
		if got := orgOf(c); got != "second" {
			t.Fatalf("saved org: %s", got)
		}
		if got := orgOf(c.with("SERVICE_ORG=default")); got != "default" {
			t.Fatalf("SERVICE_ORG over saved: %s", got)
		}
		if got := orgOf(c.with("SERVICE_ORG=default"), "--org", "second"); got != "second" {
			t.Fatalf("--org over SERVICE_ORG: %s", got)
		}
		// ...and it is what requests use: "second" has no cluster, "default" has one.
		if e := c.fails(1, "db", "list"); field(e["error"], "code") != "no_cluster" {
			t.Fatalf("db list in second: %v", e)
		}
		c.with("SERVICE_ORG=default").ok("db", "list")
		// A cluster created in "second" becomes its one cluster, found without --cluster.
		if v := c.ok("cluster", "create", "c2", "--cpu-cores", "1", "--memory-gib", "4"); v["name"] != "c2" {
			t.Fatalf("cluster create: %v", v)
		}
		// Storage verification names the failed check (this svcd has no storage credentials).
		if v := c.ok("storage", "verify", "--data", "s3://bkt/some/path"); v["verified"] != false || !strings.HasPrefix(fmt.Sprint(v["message"]), "credentials: ") {
			t.Fatalf("storage verify: %v", v)
		}
		if _, errs, code := c.run("storage", "verify"); code == 0 || !strings.Contains(errs, "--data") {
			t.Fatalf("storage verify without --data: exit %d, %s", code, errs)
		}
		waitUntil(t, "cluster c2 to serve", 2*time.Minute, func() bool { _, _, code := c.run("db", "list"); return code == 0 })
		if got := names(c.ok("db", "list"), "databases"); !slices.Contains(got, "default") {
			t.Fatalf("databases of c2: %v", got)
		}
		// A second cluster: needs cluster, until --cluster (or SERVICE_CLUSTER) names one.
		c.ok("cluster", "create", "c3")
		out, _, code = c.run("db", "list")
		if code != 2 || jsonUnmarshal(out, &needs) != nil || needs["needs"] != "cluster" ||
			!reflect.DeepEqual(needs["choices"], []any{"c2", "c3"}) {
			t.Fatalf("needs cluster: exit %d, stdout %s", code, out)
		}
		c.ok("db", "list", "--cluster", "c2")
		c.with("SERVICE_CLUSTER=c2").ok("db", "list")
		// Database: --database, then SERVICE_DATABASE, then the saved selection; several
		// databases and none selected is needs database.
		d := c.with("SERVICE_ORG=default")
		d.ok("table", "list") // default is the one choice: system never is
		d.ok("db", "create", "other")
		out, _, code = d.run("table", "list")
		if code != 2 || jsonUnmarshal(out, &needs) != nil || needs["needs"] != "database" ||
			!reflect.DeepEqual(needs["choices"], []any{"default", "other"}) {
			t.Fatalf("needs database: exit %d, stdout %s", code, out)
		}
		d.with("SERVICE_DATABASE=other").ok("table", "create", "only_in_other")
		c.saveLogin(t, config{Token: tok, TokenType: tokenOAuth, Org: "default", Database: "default"})
		tables := func(c *cli, args ...string) []string {
			return names(c.ok(append([]string{"table", "list"}, args...)...), "tables")
		}
		if got := tables(c); slices.Contains(got, "only_in_other") {
			t.Fatalf("saved database default lists %v", got)
		}
		if got := tables(c.with("SERVICE_DATABASE=other")); !reflect.DeepEqual(got, []string{"only_in_other"}) {
			t.Fatalf("SERVICE_DATABASE over saved: %v", got)
		}
		if got := tables(c.with("SERVICE_DATABASE=other"), "--database", "default"); slices.Contains(got, "only_in_other") {
			t.Fatalf("--database over SERVICE_DATABASE: %v", got)
		}
		// API key: --api-key, then SERVICE_API_KEY, then the saved login.
		if v := c.ok("whoami"); v["credential"] != "oauth" {
			t.Fatalf("saved login: %v", v)
		}
		bad := c.with("SERVICE_API_KEY=svck_not_a_real_key_000000")
		bad.fails(4, "table", "list") // the environment wins over the saved login
		if v := bad.ok("whoami", "--api-key", s.AdminKey); v["credential"] != "api_key" {
			t.Fatalf("--api-key over SERVICE_API_KEY: %v", v)
		}
		if v := c.with("SERVICE_API_KEY=" + s.AdminKey).ok("whoami"); v["credential"] != "api_key" {
			t.Fatalf("SERVICE_API_KEY over saved: %v", v)
		}
		// Base address: --url, then SERVICE_URL, then the saved login.
		c.saveLogin(t, config{URL: "http://127.0.0.1:1", Token: tok, TokenType: tokenOAuth, Org: "default", Database: "default"})
		c.ok("table", "list") // SERVICE_URL (set by the harness) over the saved address
		c.with("SERVICE_URL=http://127.0.0.1:1").ok("table", "list", "--url", s.URL)
		c.with("SERVICE_URL=http://127.0.0.1:1").fails(1, "table", "list")
		noEnv := &cli{t: t, url: "", cfgDir: c.cfgDir}
		c.saveLogin(t, config{URL: s.URL, Token: tok, TokenType: tokenOAuth, Org: "default", Database: "default"})
		noEnv.ok("table", "list") // the saved address
	})
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
