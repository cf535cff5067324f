package main

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-data/svc/cmd/svcd/svcdtest"
)

// webEvent is one generated row of the web-event shape.
type webEvent struct {
	UserID    int64
	Country   string
	Path      string
	Status    int64
	Bytes     int64
	LatencyMS float64
	Tags      []string
}

func (e webEvent) json() string {
	tags, _ := json.Marshal(e.Tags)
	// Some latencies are whole numbers and travel as integers: the path mixes Int64 and
	// Float64 and must read as Float64.
	lat := strconv.FormatFloat(e.LatencyMS, 'f', -1, 64)
	return fmt.Sprintf(`{"user":{"id":%d,"country":%q},"path":%q,"status":%d,"bytes":%d,"latency_ms":%s,"tags":%s,"ts":"2023-11-14T22:13:20Z","mixed":%s}`,
		e.UserID, e.Country, e.Path, e.Status, e.Bytes, lat, tags, e.mixed())
}

func (e webEvent) mixed() string {
	if e.Bytes%2 == 0 {
		return strconv.FormatInt(e.Bytes, 10)
	}
	return strconv.Quote("s" + strconv.FormatInt(e.Bytes, 10))
}

func webEvents(n int) []webEvent {
	countries := []string{"DE", "FR", "US", "JP"}
	statuses := []int64{200, 200, 200, 404, 500, 301}
	tagSets := [][]string{{"x", "y"}, {"x"}, {}, {"z"}}
	var out []webEvent
	for i := range n {
		e := webEvent{
			UserID:    int64(i%97 + 1),
			Country:   countries[i%len(countries)],
			Status:    statuses[i%len(statuses)],
			Bytes:     1000 + int64(i)*7,
			LatencyMS: float64(i%50) + float64(i%4)*0.25,
			Tags:      tagSets[i%len(tagSets)],
		}
		// path frequencies all differ, so topK has one answer
		switch {
		case i%10 < 5:
			e.Path = "/a"
		case i%10 < 8:
			e.Path = "/b"
		default:
			e.Path = "/c"
		}
		out = append(out, e)
	}
	return out
}

func ingest(t *testing.T, s *svcdtest.Service, table string, rows []string) {
	t.Helper()
	for start := 0; start < len(rows); start += 1000 {
		end := min(start+1000, len(rows))
		s.Must(202, "POST", "/v1/tables/"+table, "["+strings.Join(rows[start:end], ",")+"]")
	}
}

// num reads a JSON number that the JSON format may quote (64-bit integers).
func num(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			t.Fatalf("not a number: %q", x)
		}
		return f
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}

func TestEverydayAnalystQueriesOnTypedPaths(t *testing.T) {
	s := svcdtest.Start(t)
	rows := webEvents(3000)
	var lines []string
	for _, e := range rows {
		lines = append(lines, e.json())
	}
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "events"})
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "users"})
	ingest(t, s, "events", lines)
	var users []string
	for id := 1; id <= 50; id++ {
		users = append(users, fmt.Sprintf(`{"user":{"id":%d},"name":"u%d"}`, id, id))
	}
	ingest(t, s, "users", users)
	s.WaitCount("events", len(rows), 2*time.Minute)
	s.WaitCount("users", 50, time.Minute)

	// Answers computed in Go from the same rows.
	var sumBytes, minBytes, maxBytes, maxUser int64 = 0, math.MaxInt64, 0, 0
	var sumLat, maxLat float64
	argMaxPath := ""
	var statusIn, hasX, tagRows, deUsersRows, joined, tuple, sum200 int
	byStatus := map[int64]int{}
	byCountryStatus := map[string]int{}
	byCountryBytes := map[string]int64{}
	byPath := map[string]int{}
	distinctUsers := map[int64]bool{}
	deUsers := map[int64]bool{}
	var bytesList, user7 []int64
	for _, e := range rows {
		sumBytes += e.Bytes
		minBytes, maxBytes = min(minBytes, e.Bytes), max(maxBytes, e.Bytes)
		if e.Bytes == maxBytes {
			argMaxPath = e.Path
		}
		maxUser = max(maxUser, e.UserID)
		sumLat += e.LatencyMS
		maxLat = max(maxLat, e.LatencyMS)
		if e.Status == 404 || e.Status == 500 {
			statusIn++
		}
		if e.Status == 200 {
			sum200 += int(e.Bytes)
		}
		for _, tg := range e.Tags {
			tagRows++
			if tg == "x" {
				hasX++
			}
		}
		byStatus[e.Status]++
		byCountryStatus[fmt.Sprintf("%s/%d", e.Country, e.Status)]++
		byCountryBytes[e.Country] += e.Bytes
		byPath[e.Path]++
		distinctUsers[e.UserID] = true
		if e.Country == "DE" {
			deUsers[e.UserID] = true
		}
		if e.UserID <= 50 {
			joined++
		}
		if e.Country == "DE" && e.Status == 200 {
			tuple++
		}
		bytesList = append(bytesList, e.Bytes)
		if e.UserID == 7 {
			user7 = append(user7, e.Bytes)
		}
	}
	for _, e := range rows {
		if deUsers[e.UserID] {
			deUsersRows++
		}
	}
	sort.Slice(bytesList, func(i, j int) bool { return bytesList[i] < bytesList[j] })
	median := bytesList[len(bytesList)/2] // quantileExact(0.5) takes the element at floor(0.5*n)
	sort.Slice(user7, func(i, j int) bool { return user7[i] < user7[j] })

	one := func(sql string) any {
		t.Helper()
		data := s.Query(sql)
		if len(data) != 1 || len(data[0]) != 1 {
			t.Fatalf("%s: want one value, got %v", sql, data)
		}
		for _, v := range data[0] {
			return v
		}
		return nil
	}
	near := func(sql string, want float64) {
		t.Helper()
		if got := num(t, one(sql)); math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", sql, got, want)
		}
	}
	str := func(sql, want string) {
		t.Helper()
		if got := fmt.Sprint(one(sql)); got != want {
			t.Errorf("%s = %s, want %s", sql, got, want)
		}
	}

	near("SELECT sum(bytes) FROM events", float64(sumBytes))
	near("SELECT avg(latency_ms) FROM events", sumLat/float64(len(rows)))
	near("SELECT max(user.id) FROM events", float64(maxUser))
	near("SELECT min(bytes) FROM events", float64(minBytes))
	near("SELECT quantileExact(0.5)(bytes) FROM events", float64(median))
	str("SELECT argMax(path, bytes) FROM events", argMaxPath)
	near("SELECT count() FROM events WHERE status IN (404, 500)", float64(statusIn))
	near("SELECT count() FROM events WHERE user.id IN (SELECT user.id FROM events WHERE user.country = 'DE')", float64(deUsersRows))
	near("SELECT count() FROM events AS a JOIN users AS b ON a.user.id = b.user.id", float64(joined))
	near("SELECT count() FROM (SELECT arrayJoin(tags) AS tag FROM events)", float64(tagRows))
	near("SELECT countIf(has(tags, 'x')) FROM events", float64(hasX))
	near("SELECT max(bytes) - min(bytes) FROM events", float64(maxBytes-minBytes))
	near("SELECT sum(bytes) FROM events WHERE status = 200", float64(sum200))
	near("SELECT uniq(user.id) FROM events", float64(len(distinctUsers)))
	near("SELECT max(latency_ms) FROM events", maxLat)
	near("SELECT count() FROM events WHERE (user.country, status) IN (('DE', 200))", float64(tuple))
	near("SELECT count() FROM events AS a LEFT JOIN users AS b ON a.user.id = b.user.id WHERE b.name != ''", float64(joined))
	near("SELECT count() FROM (SELECT bytes FROM events UNION ALL SELECT bytes FROM events WHERE status = 404)", float64(len(rows)+byStatus[404]))
	near("WITH big AS (SELECT * FROM events WHERE bytes > 5000) SELECT sum(bytes) FROM big", func() float64 {
		var n int64
		for _, e := range rows {
			if e.Bytes > 5000 {
				n += e.Bytes
			}
		}
		return float64(n)
	}())
	near("SELECT sum(bytes::Int64) FROM events", float64(sumBytes)) // explicit casts keep working
	str("SELECT toString(topK(1)(path)) FROM events", "['/a']")
	str("SELECT toString(arraySort(groupArray(bytes))) FROM events WHERE user.id = 7", strings.ReplaceAll(fmt.Sprint(user7), " ", ","))
	near("SELECT latency_ms FROM events ORDER BY latency_ms DESC, bytes LIMIT 1", maxLat)

	// GROUP BY two paths and a window function.
	for _, r := range s.Query("SELECT user.country AS c, status AS st, count() AS n FROM events GROUP BY user.country, status") {
		key := fmt.Sprintf("%v/%v", r["c"], num(t, r["st"]))
		if int(num(t, r["n"])) != byCountryStatus[key] {
			t.Errorf("GROUP BY two paths: %s = %v, want %d", key, r["n"], byCountryStatus[key])
		}
	}
	for _, r := range s.Query("SELECT DISTINCT user.country AS c, sum(bytes) OVER (PARTITION BY user.country) AS total FROM events") {
		if c := fmt.Sprint(r["c"]); int64(num(t, r["total"])) != byCountryBytes[c] {
			t.Errorf("window: %s = %v, want %d", c, r["total"], byCountryBytes[c])
		}
	}

	// Timestamp-like strings are typed DateTime and come back in the engine's UTC text.
	str("SELECT toString(ts) FROM events LIMIT 1", "2023-11-14 22:13:20")
	near("SELECT count() FROM events WHERE ts = '2023-11-14 22:13:20'", float64(len(rows)))

	// A path mixing strings and numbers stays Dynamic: using it as a number is a 400
	// naming the path, the types seen and the cast to write.
	r := s.Must(400, "POST", "/v1/query", map[string]string{"sql": "SELECT sum(mixed) FROM events"})
	var e struct {
		Error struct{ Code, Message, Hint string } `json:"error"`
	}
	r.JSON(t, &e)
	if e.Error.Code != "path_type" || !strings.Contains(e.Error.Message, "mixed (types seen: Int64, String)") ||
		!strings.Contains(e.Error.Hint, "mixed::Nullable(String)") {
		t.Errorf("mixed path: %s", r.Body)
	}
	r = s.Must(400, "POST", "/v1/query", map[string]string{"sql": "SELECT sum(nosuch) FROM events"})
	if !strings.Contains(string(r.Body), "path_type") || !strings.Contains(string(r.Body), "nosuch (no row has it)") {
		t.Errorf("unknown path: %s", r.Body)
	}
	// A function that cannot take a typed path's type says the type and how to convert.
	r = s.Must(400, "POST", "/v1/query", map[string]string{"sql": "SELECT count() FROM events WHERE has(bytes, 1)"})
	if body := string(r.Body); !strings.Contains(body, `"path_type"`) || !strings.Contains(body, "bytes (reads as Nullable(Int64))") {
		t.Errorf("function over a typed path: %s", body)
	}

	// Tables describe their columns: doc and every path with the type it reads as.
	wantCols := map[string]string{"doc": "JSON", "bytes": "Nullable(Int64)", "latency_ms": "Nullable(Float64)",
		"user.id": "Nullable(Int64)", "user.country": "Nullable(String)", "tags": "Array(Nullable(String))",
		"mixed": "Dynamic", "ts": "Nullable(DateTime)", "path": "Nullable(String)", "status": "Nullable(Int64)"}
	checkCols := func(surface string, got map[string]string) {
		t.Helper()
		for name, typ := range wantCols {
			if got[name] != typ {
				t.Errorf("%s: %s is %q, want %q (all: %v)", surface, name, got[name], typ, got)
			}
		}
	}
	got := map[string]string{}
	for _, r := range s.Query("DESCRIBE TABLE events") {
		got[fmt.Sprint(r["name"])] = fmt.Sprint(r["type"])
	}
	checkCols("DESCRIBE", got)
	got = map[string]string{}
	for _, r := range s.Query("SELECT name, type FROM system.columns WHERE table = 'events'") {
		got[fmt.Sprint(r["name"])] = fmt.Sprint(r["type"])
	}
	checkCols("system.columns", got)
	var tv struct {
		Columns []struct{ Name, Type string } `json:"columns"`
	}
	s.Must(200, "GET", "/v1/tables/events", nil).JSON(t, &tv)
	got = map[string]string{}
	for _, c := range tv.Columns {
		got[c.Name] = c.Type
	}
	checkCols("GET /v1/tables/events", got)

	// INSERT ... SELECT records the paths it writes: the copy's paths are typed too.
	s.Must(200, "POST", "/v1/tables", map[string]string{"name": "copy404"})
	s.Must(200, "POST", "/v1/query", map[string]string{"sql": "INSERT INTO copy404 SELECT * FROM events WHERE status = 404"})
	var sum404 int64
	for _, e := range rows {
		if e.Status == 404 {
			sum404 += e.Bytes
		}
	}
	near("SELECT sum(bytes) FROM copy404", float64(sum404))
	if ty := describeTypes(t, s.Query, "copy404"); ty["bytes"] != "Nullable(Int64)" {
		t.Errorf("INSERT ... SELECT: %v", ty)
	}

	// SELECT * still returns the whole document.
	if d := s.Query("SELECT * FROM events LIMIT 1"); len(d) != 1 || d[0]["doc"] == nil {
		t.Errorf("SELECT *: %v", d)
	}
}
