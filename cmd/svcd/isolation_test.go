package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/testenv"
)

// TestTenantIsolationAttacks runs two organizations on one engine (as on a shared
// ClickHouse server) and has one try to read the other's rows every way we could think
// of. Nothing of the victim may appear in any answer: not its rows, not its engine
// database's name.
func TestTenantIsolationAttacks(t *testing.T) {
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
	s := svcdtest.Start(t, "SVC_CLICKHOUSE_URL="+eng.URL(), "SVC_BOOTSTRAP_PASSWORD="+adminPassword)

	// The victim: the bootstrap organization, with a secret.
	const secret = "TOP-SECRET-VICTIM-ROW"
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "secrets"})
	s.Must(202, "POST", "/v1/tables/secrets", fmt.Sprintf(`{"value":%q,"n":1}`, secret))
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE victim_role"})
	s.WaitCount("secrets", 1, time.Minute)
	var victimOrg struct{ Organizations []struct{ ID string } }
	s.Must(200, "GET", "/v1/organizations", nil).JSON(t, &victimOrg)
	victimDB := "o_" + strings.ReplaceAll(victimOrg.Organizations[0].ID, "-", "") + "__default"

	// The attacker: another user with an organization and cluster of their own on the
	// same engine, and an admin key there.
	admin := login(t, s, "admin", adminPassword)
	s.Must(200, "POST", "/v1/users", map[string]string{"username": "mallory", "password": "mallory's password"}, "Authorization", "Bearer "+admin)
	mallory := login(t, s, "mallory", "mallory's password")
	s.Must(200, "POST", "/v1/organizations", map[string]string{"name": "evil"}, "Authorization", "Bearer "+mallory)
	s.Must(200, "POST", "/v1/clusters?organization=evil", map[string]any{"name": "c1", "replicas": 1,
		"size": map[string]any{"cpu_cores": 1, "memory_gib": 4}}, "Authorization", "Bearer "+mallory)
	var k struct{ Token string }
	s.Must(200, "POST", "/v1/keys?organization=evil&cluster=c1", map[string]any{"name": "attack", "permission": "admin"},
		"Authorization", "Bearer "+mallory).JSON(t, &k)
	attacker := "Bearer " + k.Token
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "mine"}, "Authorization", attacker)
	s.Must(202, "POST", "/v1/tables/mine", `{"value":"attacker row"}`, "Authorization", attacker)

	attacks := []string{
		// Qualified names, quoting and comment tricks.
		"SELECT * FROM " + victimDB + ".secrets",
		"SELECT * FROM `" + victimDB + "`.secrets",
		`SELECT * FROM "` + victimDB + `".secrets`,
		"SELECT * FROM " + victimDB + ".`secrets__g1`",
		"SELECT * FROM /* default */ " + victimDB + ".secrets",
		"SELECT * FROM default.secrets",
		"SELECT * FROM secrets",
		"SELECT value FROM mine UNION ALL SELECT value FROM " + victimDB + ".secrets",
		"SELECT * FROM mine WHERE value IN (SELECT value FROM " + victimDB + ".secrets)",
		"SELECT * FROM mine AS a JOIN " + victimDB + ".secrets AS b ON 1 = 1",
		"WITH s AS (SELECT * FROM " + victimDB + ".secrets) SELECT * FROM s",
		"SELECT (SELECT value FROM " + victimDB + ".secrets LIMIT 1)",
		"SELECT 1 IN " + victimDB + ".secrets",
		"DESCRIBE TABLE " + victimDB + ".secrets",
		"EXPLAIN SELECT * FROM " + victimDB + ".secrets",
		"INSERT INTO mine SELECT * FROM " + victimDB + ".secrets",
		// System tables.
		"SELECT * FROM system.tables",
		"SELECT * FROM system.databases",
		"SELECT * FROM system.columns",
		"SELECT * FROM system.parts",
		"SELECT name, database FROM system.tables WHERE database LIKE 'o_%'",
		"SELECT * FROM system.processes",
		"SELECT * FROM system.query_log",
		"SELECT * FROM system.users",
		"SELECT * FROM system.grants",
		"SELECT * FROM system.dictionaries",
		"SELECT * FROM system.settings",
		"SELECT * FROM system.parts_columns",
		"SELECT * FROM system.mutations",
		"SELECT * FROM system.data_skipping_indices",
		// The service's own database.
		"SELECT * FROM _svc.request_log",
		"SELECT * FROM _svc.ingest_keys",
		"SELECT * FROM `_svc`.request_log",
		// Table functions.
		"SELECT * FROM merge('" + victimDB + "', '.*')",
		"SELECT * FROM merge(REGEXP('o_.*'), '.*')",
		"SELECT * FROM remote('127.0.0.1', " + victimDB + ".secrets)",
		"SELECT * FROM remote('127.0.0.1', '" + victimDB + "', 'secrets')",
		"SELECT * FROM cluster('default', " + victimDB + ".secrets)",
		"SELECT * FROM clusterAllReplicas('default', " + victimDB + ".secrets)",
		"SELECT * FROM url('http://127.0.0.1/', JSONEachRow)",
		"SELECT * FROM file('/etc/passwd', 'LineAsString')",
		"SELECT * FROM s3('http://127.0.0.1/x', 'JSONEachRow')",
		"SELECT * FROM mysql('127.0.0.1:3306', 'db', 't', 'u', 'p')",
		"SELECT * FROM postgresql('127.0.0.1:5432', 'db', 't', 'u', 'p')",
		"SELECT * FROM executable('cat /etc/passwd', 'LineAsString', 'x String')",
		"SELECT * FROM input('x String')",
		"SELECT * FROM dictionary('" + victimDB + ".d')",
		"SELECT dictGet('" + victimDB + ".d', 'v', 1)",
		"SELECT joinGet('" + victimDB + ".secrets', 'value', 1)",
		"SELECT hasColumnInTable('" + victimDB + "', 'secrets', 'value')",
		"SELECT * FROM view(SELECT * FROM " + victimDB + ".secrets)",
		"SELECT * FROM numbers(1) AS n, " + victimDB + ".secrets AS s",
		// Settings and other statements.
		"SELECT * FROM mine SETTINGS readonly = 0",
		"SELECT * FROM mine SETTINGS additional_table_filters = {'mine': '1'}",
		"SELECT * FROM mine SETTINGS prefer_column_name_to_alias = 1",
		"USE " + victimDB,
		"SET readonly = 0",
		"SHOW TABLES FROM " + victimDB,
		"SHOW DATABASES",
		"ATTACH TABLE x",
		"SELECT currentDatabase(), database()",
		"SELECT * FROM mine; SELECT * FROM " + victimDB + ".secrets",
		"CREATE ROW POLICY p ON " + victimDB + ".secrets FOR SELECT USING 1 TO victim_role",
		"GRANT SELECT ON " + victimDB + ".* TO victim_role",
		"SELECT * FROM ｄefault.secrets",
		"SELECT * FROM o_\\u0030.secrets",
	}
	for _, sql := range attacks {
		for _, format := range []string{"JSON", "TSV"} {
			r, err := s.Do("POST", "/v1/query", map[string]string{"sql": sql, "format": format}, "Authorization", attacker)
			if err != nil {
				t.Fatal(err)
			}
			// An error may echo what the attacker wrote; only what they did not know is
			// a leak.
			body := string(r.Body)
			for _, fact := range []string{secret, victimDB, "victim_role", "secrets__g1"} {
				if strings.Contains(body, fact) && !strings.Contains(sql, fact) {
					t.Errorf("LEAK of %q (%d) for %s:\n%s", fact, r.Status, sql, body)
				}
			}
		}
	}
	// Workload scheduling is server-wide (one root workload, one resource per operation),
	// so on a shared server neither organization may change it, while both may select a
	// workload the operator defined.
	for _, auth := range []string{attacker, "Bearer " + s.AdminKey} {
		for _, sql := range []string{"CREATE RESOURCE cpu (MASTER THREAD, WORKER THREAD)", "CREATE WORKLOAD all_work",
			"CREATE OR REPLACE WORKLOAD all_work", "DROP WORKLOAD IF EXISTS all_work", "DROP RESOURCE IF EXISTS cpu"} {
			r := s.Must(403, "POST", "/v1/query", map[string]string{"sql": sql}, "Authorization", auth)
			if !strings.Contains(string(r.Body), "server-wide") {
				t.Errorf("%s on a shared server: %s", sql, r.Body)
			}
		}
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM numbers(10) SETTINGS workload = 'all_work'"}, "Authorization", auth)
	}
	// The check above can fail: the victim's own read shows exactly what it looks for.
	if r := s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT value FROM secrets"}); !strings.Contains(string(r.Body), secret) {
		t.Fatalf("positive control: the victim cannot read its own secret: %s", r.Body)
	}
	// And the victim sees nothing of the attacker either.
	r := s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT name FROM system.tables"})
	if strings.Contains(string(r.Body), "mine") {
		t.Errorf("the victim's system.tables lists the attacker's table: %s", r.Body)
	}
	// The attacker's own rows are fine.
	if d := queryAs(t, s, attacker, "SELECT count() AS n FROM mine"); d[0]["n"] != float64(1) {
		t.Fatalf("attacker's own table: %v", d)
	}
}

func queryAs(t *testing.T, s *svcdtest.Service, auth, sql string) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res struct{ Data []map[string]any }
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql}, "Authorization", auth).JSON(t, &res)
		if len(res.Data) > 0 && (res.Data[0]["n"] != float64(0) || time.Now().After(deadline)) {
			return res.Data
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRowPoliciesAndProfilesOnASharedEngine (issue 25 audit row 7): on a ClickHouse server
// every cluster shares, an organization manages its row policies and settings profiles
// (records of its own, not engine objects, unlike server-wide workloads); they apply to
// its custom-role keys and reach no other organization's reads of a same-named table.
func TestRowPoliciesAndProfilesOnASharedEngine(t *testing.T) {
	eng := sharedEngine(t)
	s := svcdtest.Start(t, "SVC_CLICKHOUSE_URL="+eng.URL(), "SVC_BOOTSTRAP_PASSWORD="+adminPassword)
	other := secondOrganization(t, s)
	rows := `[{"n":1},{"n":2},{"n":3}]`
	for _, auth := range []string{"Bearer " + s.AdminKey, other} {
		s.Must(200, "POST", "/v1/tables", map[string]string{"name": "t"}, "Authorization", auth)
		s.Must(202, "POST", "/v1/tables/t", rows, "Authorization", auth)
		if d := queryAs(t, s, auth, "SELECT count() AS n FROM t"); d[0]["n"] != float64(3) {
			t.Fatalf("seed: %v", d)
		}
	}
	for _, sql := range []string{
		"CREATE ROLE analyst",
		"GRANT SELECT ON default.t TO analyst",
		"CREATE ROW POLICY only_one ON t FOR SELECT USING n = 1 TO analyst",
		"CREATE SETTINGS PROFILE quiet SETTINGS use_concurrency_control = 0 TO analyst",
	} {
		s.Must(200, "POST", "/v1/query", map[string]string{"sql": sql})
	}
	key, _ := createKey(t, s, map[string]any{"name": "analyst key", "database_roles": []string{"analyst"}})
	var res struct{ Data []map[string]any }
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "SELECT count() AS n, toUInt64(getSetting('use_concurrency_control')) AS c FROM t"},
		"Authorization", "Bearer "+key).JSON(t, &res)
	if len(res.Data) != 1 || res.Data[0]["n"] != float64(1) || fmt.Sprint(res.Data[0]["c"]) != "0" {
		t.Errorf("the custom-role key read %v, want 1 row (the policy) and use_concurrency_control 0 (the profile)", res.Data)
	}
	// The other organization's table of the same name is untouched.
	if d := queryAs(t, s, other, "SELECT count() AS n FROM t"); d[0]["n"] != float64(3) {
		t.Errorf("the other organization reads %v rows of its t, want 3", d)
	}
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "DROP ROW POLICY only_one ON t"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "DROP SETTINGS PROFILE quiet"})
}
