package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func describeTypes(t *testing.T, q func(string) []map[string]any, table string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, r := range q("DESCRIBE TABLE " + table) {
		got[fmt.Sprint(r["name"])] = fmt.Sprint(r["type"])
	}
	return got
}

func TestTablesDescribeTheirPathsAndTypesDrift(t *testing.T) {
	s := startControlPlane(t)
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "drift"})
	want := func(sql string, v string) {
		t.Helper()
		data := s.Query(sql)
		if len(data) != 1 {
			t.Fatalf("%s: %v", sql, data)
		}
		for _, got := range data[0] {
			if fmt.Sprint(got) != v {
				t.Errorf("%s = %v, want %s", sql, got, v)
			}
		}
	}
	types := func() map[string]string { return describeTypes(t, s.Query, "drift") }

	// An integer path, and an object.
	s.Must(202, "POST", "/v1/tables/drift", `[{"n":1},{"n":2},{"o":{"b":1}}]`)
	s.WaitCount("drift", 3, time.Minute)
	want("SELECT toString(sum(n)) FROM drift", "3")
	if ty := types(); ty["n"] != "Nullable(Int64)" || ty["o.b"] != "Nullable(Int64)" {
		t.Errorf("after integers: %v", ty)
	}
	// The integer path gets a float, the object becomes a scalar.
	s.Must(202, "POST", "/v1/tables/drift", `[{"n":2.5},{"o":5}]`)
	s.WaitCount("drift", 5, time.Minute)
	want("SELECT toString(sum(n)) FROM drift", "5.5")
	want("SELECT toString(sum(o)) FROM drift", "5")
	want("SELECT toString(sum(o.b)) FROM drift", "1")
	if ty := types(); ty["n"] != "Nullable(Float64)" || ty["o"] != "Nullable(Int64)" {
		t.Errorf("after a float and a scalar object: %v", ty)
	}
	// Then a string: the path is Dynamic, and using it as a number says what to write.
	s.Must(202, "POST", "/v1/tables/drift", `{"n":"seven"}`)
	s.WaitCount("drift", 6, time.Minute)
	r := s.Must(400, "POST", "/v1/query", map[string]string{"sql": "SELECT sum(n) FROM drift"})
	if body := string(r.Body); !strings.Contains(body, `"path_type"`) || !strings.Contains(body, "n (types seen: Float64, Int64, String)") {
		t.Errorf("mixed path: %s", body)
	}
	want("SELECT toString(sum(toFloat64OrNull(toString(n)))) FROM drift", "5.5")
	if ty := types(); ty["n"] != "Dynamic" {
		t.Errorf("after a string: %v", ty)
	}

	// A path that first appears after 10,000 rows.
	var rows []string
	for i := range 10_000 {
		rows = append(rows, fmt.Sprintf(`{"i":%d}`, i))
	}
	for start := 0; start < len(rows); start += 2500 {
		s.Must(202, "POST", "/v1/tables/drift", "["+strings.Join(rows[start:start+2500], ",")+"]")
	}
	s.WaitCount("drift", 10_006, 2*time.Minute)
	s.Must(202, "POST", "/v1/tables/drift", `{"late":42}`)
	s.WaitCount("drift", 10_007, time.Minute)
	want("SELECT toString(sum(late)) FROM drift", "42")
	if ty := types(); ty["late"] != "Nullable(Int64)" {
		t.Errorf("late path: %v", ty)
	}
}

func TestFirstInsertCreatesTheTable(t *testing.T) {
	s := startControlPlane(t)
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "CREATE ROLE inserter"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "GRANT INSERT ON *.* TO inserter"})
	custom, _ := createKey(t, s, map[string]any{"name": "custom", "database_roles": []string{"inserter"}})
	keys := map[string]string{"admin": s.AdminKey}
	for _, perm := range []string{"read_write", "write_only"} {
		keys[perm], _ = createKey(t, s, map[string]any{"name": perm, "permission": perm})
	}
	const concurrent = 4
	for perm, key := range keys {
		table := "auto_" + perm
		var wg sync.WaitGroup
		statuses := make([]int, concurrent)
		for i := range concurrent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := s.Do("POST", "/v1/tables/"+table, fmt.Sprintf(`{"n":%d}`, i), "Authorization", "Bearer "+key)
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = r.Status
				if r.Status != 202 {
					t.Logf("%s: %s", perm, r.Body)
				}
			}()
		}
		wg.Wait()
		for i, st := range statuses {
			if st != 202 {
				t.Errorf("%s: request %d answered %d", perm, i, st)
			}
		}
		s.WaitCount(table, concurrent, time.Minute)
		var list struct {
			Tables []struct{ Name string } `json:"tables"`
		}
		s.Must(200, "GET", "/v1/tables", nil).JSON(t, &list)
		n := 0
		for _, tb := range list.Tables {
			if tb.Name == table {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d tables named %s", perm, n, table)
		}
	}
	r, err := s.Do("POST", "/v1/tables/auto_custom", `{"n":1}`, "Authorization", "Bearer "+custom)
	if err != nil || r.Status != 404 || !strings.Contains(string(r.Body), "table_not_found") {
		t.Fatalf("custom-role key into a missing table: %v %d %s", err, r.Status, r.Body)
	}
	s.Must(404, "GET", "/v1/tables/auto_custom", nil)
}

// TestLogSearchReadsNumericPathsTyped: log search types numeric paths by the same rule
// (integers mixed with floats read as Float64), in the base search and in later stages,
// and a path mixing numbers and strings keeps SPL's loose comparison.
func TestLogSearchReadsNumericPathsTyped(t *testing.T) {
	s := startControlPlane(t)
	installApp(t, s, "logsearch")
	splunk := []string{"Authorization", "Splunk " + s.AdminKey}
	now := time.Now().Unix()
	var b strings.Builder
	var sum float64
	over2, codes200 := 0, 0
	for i := range 100 {
		lat := fmt.Sprint(i % 7)
		if i%2 == 1 {
			lat = fmt.Sprintf("%d.5", i%7)
		}
		var v float64
		fmt.Sscan(lat, &v)
		sum += v
		if v > 2 {
			over2++
		}
		code := `200`
		if i%3 == 0 {
			code = `"200"`
		}
		if i%5 == 0 {
			code = `"err"`
		} else {
			codes200++
		}
		fmt.Fprintf(&b, `{"time": %d, "event": {"lat": %s, "code": %s}}`+"\n", now-int64(i), lat, code)
	}
	s.Must(200, "POST", "/services/collector/event", b.String(), splunk...)
	s.WaitCount("logsearch_events", 100, time.Minute)
	search := func(spl string) map[string]any {
		t.Helper()
		var res struct{ Data []map[string]any }
		s.Must(200, "POST", "/v1/spl/search", map[string]any{"spl": spl, "earliest": "-1h"}).JSON(t, &res)
		if len(res.Data) != 1 {
			t.Fatalf("%s: %v", spl, res.Data)
		}
		return res.Data[0]
	}
	if got := search("* | stats sum(lat) AS s")["s"]; fmt.Sprint(got) != fmt.Sprint(sum) {
		t.Errorf("sum(lat) = %v, want %v", got, sum)
	}
	if got := search("lat>2 | stats count AS n")["n"]; fmt.Sprint(got) != fmt.Sprint(over2) {
		t.Errorf("lat>2: %v, want %d", got, over2)
	}
	if got := search("code=200 | stats count AS n")["n"]; fmt.Sprint(got) != fmt.Sprint(codes200) {
		t.Errorf("code=200 over a mixed path: %v, want %d", got, codes200)
	}
}
