package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/infra/testenv"
	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/query/promstore"
)

// retentionView is the retention part of a table as the API shows it.
type retentionView struct {
	Retention        *string
	RetentionSetting *string `json:"retention_setting"`
	RetentionTTL     *string `json:"retention_ttl"`
	RetentionStatus  string  `json:"retention_status"`
	RetentionProblem string  `json:"retention_problem"`
	Generations      []struct {
		Number int
		Key    string `json:"physical_sorting_key"`
	}
}

// fresh zeroes v for a decode: fields the answer omits must not keep older values.
func fresh(v *retentionView) *retentionView {
	*v = retentionView{}
	return v
}

func (v retentionView) String() string {
	return fmt.Sprintf("retention=%s setting=%s ttl=%s status=%s problem=%q generations=%v",
		str(v.Retention), str(v.RetentionSetting), str(v.RetentionTTL), v.RetentionStatus, v.RetentionProblem, v.Generations)
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// TestRetention runs a table's retention end to end on a real svcd and engine: set at
// creation, enforced by the engine's TTL (forced with OPTIMIZE FINAL, never waited for),
// shortened and lengthened, applied to every generation, read back from the engine (a
// TTL changed behind the service's back shows as a mismatch: SigNoz#9553), a replayed
// batch of expired rows not resurrected, refused to custom-role keys and to SQL, and a
// database's default inherited by new tables.
func TestRetention(t *testing.T) {
	t.Parallel() // see TestMain
	svcdtest.Requirements(t)
	bin := testenv.BinDir(t)
	eng, err := clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: filepath.Join(bin, "chengine"), Lib: os.Getenv("SVC_CHDB_LIB"),
		DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(context.Background())
	direct := chtest.Client(t, eng.URL())
	ctx := context.Background()
	s := svcdtest.Start(t, "SVC_CLICKHOUSE_URL="+eng.URL(), "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	var orgs struct{ Organizations []struct{ ID string } }
	s.Must(200, "GET", "/v1/organizations", nil).JSON(t, &orgs)
	db := catalog.EngineDatabase(uuid.MustParse(orgs.Organizations[0].ID), catalog.DefaultDatabase)
	gen := func(n int) string { return fmt.Sprintf("`%s`.`events__g%d`", db, n) }
	optimize := func(gens ...int) {
		t.Helper()
		for _, n := range gens {
			if err := direct.Exec(ctx, "OPTIMIZE TABLE "+gen(n)+" FINAL"); err != nil {
				t.Fatal(err)
			}
		}
	}
	describe := func() retentionView {
		t.Helper()
		var v retentionView
		s.Must(200, "GET", "/v1/tables/events", nil).JSON(t, fresh(&v))
		return v
	}
	kept := func() string {
		t.Helper()
		var out []string
		for _, r := range s.Query("SELECT toString(n) AS n FROM events ORDER BY n") {
			out = append(out, fmt.Sprint(r["n"]))
		}
		return strings.Join(out, ",")
	}
	now := time.Now().UTC()
	row := func(n int, age time.Duration) string {
		return fmt.Sprintf(`{"n":%d,"timestamp":%q}`, n, now.Add(-age).Format(time.RFC3339Nano))
	}
	const day = 24 * time.Hour

	// Validated: a clear 400 naming the field, nothing created.
	for _, bad := range []string{"30", "forever", "30x", "ts + INTERVAL 1 MONTH", "f(ts) + 1d", "0d"} {
		r := s.Must(400, "POST", "/v1/tables", map[string]string{"name": "events", "retention": bad})
		if !strings.Contains(string(r.Body), `"invalid_retention"`) {
			t.Fatalf("retention %q: %s", bad, r.Body)
		}
	}
	s.Must(404, "GET", "/v1/tables/events", nil)

	var v retentionView
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "events", "retention": "30d"}).JSON(t, fresh(&v))
	if str(v.RetentionSetting) != "30d" || v.Retention != nil || v.RetentionStatus != "pending" {
		t.Fatalf("created: %v", v)
	}

	// Rows older than the retention disappear once the engine applies it; newer ones,
	// and rows without a time, stay.
	s.Must(202, "POST", "/v1/tables/events", "["+row(1, 40*day)+","+row(2, 10*day)+","+row(3, time.Hour)+`,{"n":4}]`)
	old := "[" + row(5, 45*day) + "," + row(6, 50*day) + "]"
	s.Must(202, "POST", "/v1/tables/events", old, "Idempotency-Key", "old-batch")
	s.WaitCaughtUp("events", 2*time.Minute)
	v = describe()
	if str(v.Retention) != "30d" || v.RetentionStatus != "in_sync" || !strings.Contains(str(v.RetentionTTL), "toIntervalSecond(2592000)") {
		t.Fatalf("after the first rows: %v", v)
	}
	optimize(1)
	if got := kept(); got != "2,3,4" {
		t.Fatalf("after OPTIMIZE FINAL: rows %s, want 2,3,4", got)
	}

	// A replayed batch of expired rows (the same Idempotency-Key) is not resurrected.
	s.Must(202, "POST", "/v1/tables/events", old, "Idempotency-Key", "old-batch")
	s.WaitCaughtUp("events", 2*time.Minute)
	if got := kept(); got != "2,3,4" {
		t.Fatalf("after the replay: rows %s, want 2,3,4", got)
	}

	// SigNoz#9553: the API reads what the engine has, not what was asked.
	if err := direct.Exec(ctx, "ALTER TABLE "+gen(1)+" REMOVE TTL"); err != nil {
		t.Fatal(err)
	}
	v = describe()
	if v.Retention != nil || str(v.RetentionSetting) != "30d" || v.RetentionStatus != "mismatch" ||
		!strings.Contains(v.RetentionProblem, "generation 1 has no TTL in the engine") {
		t.Fatalf("TTL removed in the engine, the API shows %+v", v)
	}
	// The engine's start reconciles it (a change that did not reach a stopped engine),
	if s.Restart(); describe().RetentionStatus != "in_sync" {
		t.Fatalf("after a restart: %v", describe())
	}
	// and so does the same setting again.
	if err := direct.Exec(ctx, "ALTER TABLE "+gen(1)+" MODIFY TTL ifNull(parseDateTime64BestEffortOrNull(toString(getSubcolumn(doc, 'timestamp')), 3, 'UTC'), toDateTime64('2190-01-01 00:00:00', 3, 'UTC')) + toIntervalDay(31)"); err != nil {
		t.Fatal(err)
	}
	if v = describe(); v.RetentionStatus != "mismatch" || !strings.Contains(v.RetentionProblem, "a TTL the service did not write") {
		t.Fatalf("TTL changed in the engine, the API shows %v", v)
	}
	s.Must(200, "PATCH", "/v1/tables/events", map[string]string{"retention": "30d"}).JSON(t, fresh(&v))
	if str(v.Retention) != "30d" || v.RetentionStatus != "in_sync" {
		t.Fatalf("re-applied: %v", v)
	}

	// Shortening applies to the rows already stored (the engine materializes the TTL).
	s.Must(200, "PATCH", "/v1/tables/events", map[string]string{"retention": "7d"}).JSON(t, fresh(&v))
	if str(v.Retention) != "7d" || v.RetentionStatus != "in_sync" {
		t.Fatalf("shortened: %v", v)
	}
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		got := kept()
		return got == "3,4", "rows " + got + ", want 3,4 after shortening to 7d"
	})

	// Lengthening: rows the longer retention covers stay, also through a new generation
	// (a changed sorting key), which gets the table's retention too.
	s.Must(200, "PATCH", "/v1/tables/events", map[string]string{"retention": "ts + INTERVAL 60 DAY", "sorting_key": "n"})
	s.Must(200, "PATCH", "/v1/tables/events", map[string]string{"retention": "60d"}).JSON(t, fresh(&v))
	if str(v.Retention) != "60d" || v.RetentionStatus != "in_sync" {
		t.Fatalf("lengthened: %v", v)
	}
	s.Must(202, "POST", "/v1/tables/events", "["+row(7, 10*day)+","+row(8, 40*day)+","+row(9, 70*day)+"]")
	s.WaitCaughtUp("events", 2*time.Minute)
	v = describe()
	if len(v.Generations) != 2 || str(v.Retention) != "60d" || v.RetentionStatus != "in_sync" {
		t.Fatalf("second generation: %v", v)
	}
	optimize(1, 2)
	if got := kept(); got != "3,4,7,8" {
		t.Fatalf("after lengthening to 60d: rows %s, want 3,4,7,8", got)
	}
	// SHOW CREATE TABLE, as ClickHouse's, carries the retention as the TTL clause in the
	// table's own names.
	if rows := s.Query("SHOW CREATE TABLE events"); len(rows) != 1 ||
		rows[0]["statement"] != "CREATE TABLE `default`.`events`\n(\n    `doc` JSON\n)\nENGINE = ReplicatedRawMergeTree\nORDER BY (n)\nTTL timestamp + INTERVAL 60 DAY" {
		t.Fatalf("SHOW CREATE TABLE: %v", rows)
	}

	// The background re-sort swaps in a copy of generation 1: the copy keeps the TTL.
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		v := describe()
		return v.Generations[0].Key == v.Generations[1].Key, fmt.Sprintf("generation 1 not re-sorted yet: %v", v)
	})
	if v = describe(); str(v.Retention) != "60d" || v.RetentionStatus != "in_sync" {
		t.Fatalf("after the re-sort: %v", v)
	}

	// No retention: the TTL is removed from every generation.
	s.Must(200, "PATCH", "/v1/tables/events", map[string]string{"retention": ""}).JSON(t, fresh(&v))
	if v.Retention != nil || v.RetentionSetting != nil || v.RetentionTTL != nil || v.RetentionStatus != "in_sync" {
		t.Fatalf("removed: %v", v)
	}
	s.Must(400, "PATCH", "/v1/tables/events", map[string]string{"retention": "1 year"})

	// Custom-role keys cannot change it, nor can SQL change the engine's TTL.
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE ret_writer"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT SELECT, INSERT ON default.events TO ret_writer"})
	role, _ := createKey(t, s, map[string]any{"name": "role key", "database_roles": []string{"ret_writer"}})
	s.Must(403, "PATCH", "/v1/tables/events", map[string]string{"retention": "1d"}, "Authorization", "Bearer "+role)
	s.Must(403, "POST", "/v1/tables", map[string]string{"name": "mine", "retention": "1d"}, "Authorization", "Bearer "+role)
	s.Must(403, "PATCH", "/v1/databases/default", map[string]string{"retention": "1d"}, "Authorization", "Bearer "+role)
	for _, key := range []string{s.AdminKey, role} {
		r, err := s.Do("POST", "/v1/query", map[string]string{"sql": "ALTER TABLE events MODIFY TTL now() + INTERVAL 1 DAY"},
			"Authorization", "Bearer "+key)
		if err != nil || r.Status < 400 || r.Status >= 500 {
			t.Fatalf("ALTER ... MODIFY TTL through SQL: %v %v", r, err)
		}
	}
	if v = describe(); v.RetentionSetting != nil || v.RetentionTTL != nil {
		t.Fatalf("after the refused changes: %v", v)
	}

	// A database's default retention is inherited by tables created after it.
	var d struct{ Retention *string }
	s.Must(400, "PATCH", "/v1/databases/default", map[string]string{"retention": "soon"})
	s.Must(200, "PATCH", "/v1/databases/default", map[string]string{"retention": "12h"}).JSON(t, &d)
	if str(d.Retention) != "12h" {
		t.Fatalf("database default: %+v", d)
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "later"}).JSON(t, fresh(&v))
	if str(v.RetentionSetting) != "12h" {
		t.Fatalf("inherited: %v", v)
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "kept", "retention": ""}).JSON(t, fresh(&v))
	if v.RetentionSetting != nil {
		t.Fatalf("explicitly none: %v", v)
	}
	s.Must(400, "POST", "/v1/databases", map[string]string{"name": "other", "retention": "later"})
	var dbs struct{ Databases []struct{ Name string } }
	s.Must(200, "GET", "/v1/databases", nil).JSON(t, &dbs)
	for _, x := range dbs.Databases {
		if x.Name == "other" {
			t.Fatal("a database was created with an invalid retention")
		}
	}
	s.Must(200, "POST", "/v1/databases", map[string]string{"name": "other", "retention": "90d"}).JSON(t, &d)
	if str(d.Retention) != "90d" {
		t.Fatalf("created database: %+v", d)
	}
	var list struct{ Tables []json.RawMessage }
	s.Must(200, "GET", "/v1/tables", nil).JSON(t, &list)
	if len(list.Tables) != 3 || !strings.Contains(string(list.Tables[0])+string(list.Tables[1])+string(list.Tables[2]), `"retention_status"`) {
		t.Fatalf("list: %s", list.Tables)
	}
}

// TestAppRetention: an app's retention, set by an organization admin through the app's
// settings, applies to the app's tables in every database (the OpenTelemetry app's
// signal tables, the Prometheus app's sample tables in the engine), is read back from
// the engine, is given to the app's tables created later ahead of the database default,
// and is refused to API keys.
func TestAppRetention(t *testing.T) {
	svcdtest.Requirements(t)
	bin := testenv.BinDir(t)
	eng, err := clickhouse.NewProcess(clickhouse.ProcessConfig{Binary: filepath.Join(bin, "chengine"), Lib: os.Getenv("SVC_CHDB_LIB"),
		DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(context.Background())
	direct := chtest.Client(t, eng.URL())
	ctx := context.Background()
	s := svcdtest.Start(t, "SVC_CLICKHOUSE_URL="+eng.URL(), "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	admin := "Bearer " + login(t, s, "admin", adminPassword)
	var orgs struct{ Organizations []struct{ ID string } }
	s.Must(200, "GET", "/v1/organizations", nil).JSON(t, &orgs)
	db := catalog.EngineDatabase(uuid.MustParse(orgs.Organizations[0].ID), catalog.DefaultDatabase)
	now := time.Now().UTC()

	// The OpenTelemetry app's logs table (its default name) with old and new rows, and
	// the Prometheus app's tables with old and new samples.
	s.Must(202, "POST", "/v1/tables/logs", fmt.Sprintf(`[{"n":1,"timestamp":%q},{"n":2,"timestamp":%q}]`,
		now.Add(-40*24*time.Hour).Format(time.RFC3339Nano), now.Add(-time.Hour).Format(time.RFC3339Nano)))
	s.WaitCaughtUp("logs", 2*time.Minute)
	for _, stmt := range promstore.DDL(db) {
		if err := direct.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	samples := fmt.Sprintf("INSERT INTO `%s`.prometheus_data (id, timestamp, value) VALUES (generateUUIDv4(), now64(3) - INTERVAL 40 DAY, 1), (generateUUIDv4(), now64(3) - INTERVAL 1 HOUR, 2)", db)
	if err := direct.Exec(ctx, samples); err != nil {
		t.Fatal(err)
	}
	promCount := func() string {
		n, err := direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.prometheus_data", db))
		if err != nil || len(n) != 1 {
			t.Fatal(n, err)
		}
		return n[0]
	}

	type appTable struct {
		Database, Table string
		Retention       *string
		Status          string `json:"retention_status"`
	}
	type appAnswer struct {
		ID        string
		Retention *string
		Tables    []appTable
	}
	patch := func(app, retention string) appAnswer {
		t.Helper()
		var a appAnswer
		s.Must(200, "PATCH", "/v1/apps/"+app+appScope, map[string]string{"retention": retention}, "Authorization", admin).JSON(t, &a)
		return a
	}

	// Refused to API keys (the admin key, a custom-role key), and invalid values.
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE app_reader"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT SELECT ON default.logs TO app_reader"})
	role, _ := createKey(t, s, map[string]any{"name": "role key", "database_roles": []string{"app_reader"}})
	for _, key := range []string{s.AdminKey, role} {
		s.Must(403, "PATCH", "/v1/apps/opentelemetry"+appScope, map[string]string{"retention": "1d"}, "Authorization", "Bearer "+key)
	}
	s.Must(400, "PATCH", "/v1/apps/opentelemetry"+appScope, map[string]string{"retention": "a month"}, "Authorization", admin)
	r := s.Must(400, "PATCH", "/v1/apps/prometheus"+appScope, map[string]string{"retention": "ts + INTERVAL 1 DAY"}, "Authorization", admin)
	if !strings.Contains(string(r.Body), "invalid_retention") {
		t.Fatalf("prometheus expression: %s", r.Body)
	}

	a := patch("opentelemetry", "30d")
	if str(a.Retention) != "30d" || len(a.Tables) != 1 || a.Tables[0].Table != "logs" || str(a.Tables[0].Retention) != "30d" || a.Tables[0].Status != "in_sync" {
		t.Fatalf("opentelemetry: %+v", a)
	}
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		n := s.Count("logs")
		return n == 1, fmt.Sprintf("logs holds %d rows, want 1 once the app's 30d applies", n)
	})
	a = patch("prometheus", "30d")
	if str(a.Retention) != "30d" || len(a.Tables) != 4 { // samples, series (tags), histograms, exemplars
		t.Fatalf("prometheus: %+v", a)
	}
	for _, x := range a.Tables {
		if str(x.Retention) != "30d" || x.Status != "in_sync" {
			t.Fatalf("prometheus table %+v", x)
		}
	}
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		n := promCount()
		return n == "1", "prometheus_data holds " + n + " samples, want 1 once the app's 30d applies"
	})

	// The app's tables created later get the app's retention, ahead of the database's.
	s.Must(200, "PATCH", "/v1/databases/default", map[string]string{"retention": "90d"})
	var v retentionView
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "traces"}).JSON(t, &v)
	if str(v.RetentionSetting) != "30d" {
		t.Fatalf("traces: %v", v)
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "spans"}).JSON(t, fresh(&v))
	if str(v.RetentionSetting) != "90d" {
		t.Fatalf("spans: %v", v)
	}
	var list struct{ Apps []appAnswer }
	s.Must(200, "GET", "/v1/apps"+appScope, nil, "Authorization", admin).JSON(t, &list)
	for _, x := range list.Apps {
		if want := map[string]string{"opentelemetry": "30d", "prometheus": "30d", "logsearch": "<null>"}[x.ID]; str(x.Retention) != want {
			t.Fatalf("app list: %s retention %s, want %s", x.ID, str(x.Retention), want)
		}
	}
	// None again: the TTL is removed.
	if a = patch("prometheus", ""); a.Retention != nil || a.Tables[0].Retention != nil || a.Tables[0].Status != "in_sync" {
		t.Fatalf("prometheus none: %+v", a)
	}
}
