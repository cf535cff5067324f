package promread

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/promstore"
)

// TestSamplesReadInEitherLayout reads series from a data table led by metric_hash, where
// one series has rows with its metric's hash (as the consumer writes them) between rows
// without one (inserted by SQL), another only rows without and a third only rows with;
// and from a data table made before metric_hash (sorting key (id, timestamp), no such
// column), twice. Every series comes whole and in time order, and only the old table is
// remembered as such.
func TestSamplesReadInEitherLayout(t *testing.T) {
	url, _ := chtest.Engine(t)
	eng := chtest.Client(t, url)
	ctx := context.Background()
	series := func(name, job string, from, n int64) SeriesSamples {
		s := SeriesSamples{Labels: labels.FromStrings("__name__", name, "job", job)}
		for i := range n {
			s.Samples = append(s.Samples, Sample{T: (from + i) * 1000, F: float64(from + i)})
		}
		return s
	}
	exec := func(sql string) {
		t.Helper()
		if err := eng.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	data := func(db string) string { return table(db, promstore.DataTable) }
	load := func(db string, old bool) {
		exec("CREATE DATABASE " + db)
		if old {
			exec("CREATE TABLE " + data(db) + " (id UUID, timestamp DateTime64(3, 'UTC'), value Float64) ENGINE = MergeTree ORDER BY (id, timestamp)")
		}
		for _, stmt := range promstore.DDL(db) {
			exec(stmt)
		}
		if err := (SQLLoader{Engine: eng, Database: db, WithoutMetricHash: true}).Load(ctx, []SeriesSamples{
			series("up", "a", 0, 10), series("up", "b", 0, 5), series("other", "c", 0, 3),
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]int64{ // seconds
		`{__name__="up", job="a"}`:    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
		`{__name__="up", job="b"}`:    {0, 1, 2, 3, 4},
		`{__name__="other", job="c"}`: {0, 1, 2},
	}
	idOf := func(s SeriesSamples) string {
		var ls []promstore.Label
		s.Labels.Range(func(l labels.Label) { ls = append(ls, promstore.Label{Name: l.Name, Value: l.Value}) })
		return "toUUID('" + promstore.SeriesID(ls).String() + "')"
	}

	load("layout_new", false)
	// up{job="a"}: hashed rows between its unhashed ones (and one at an equal time);
	// other{job="c"}: its rows moved to hashed ones.
	a, c := idOf(series("up", "a", 0, 0)), idOf(series("other", "c", 0, 0))
	exec(fmt.Sprintf("INSERT INTO %s (id, timestamp, value, metric_hash) SELECT id, timestamp + toIntervalMillisecond(500), value + 0.5, cityHash64('up') FROM %[1]s WHERE id = %s AND timestamp < toDateTime64(5, 3, 'UTC')", data("layout_new"), a))
	exec(fmt.Sprintf("INSERT INTO %s (id, timestamp, value, metric_hash) VALUES (%s, toDateTime64(7, 3, 'UTC'), 70, cityHash64('up'))", data("layout_new"), a))
	exec(fmt.Sprintf("INSERT INTO %s (id, timestamp, value, metric_hash) SELECT id, timestamp, value, cityHash64('other') FROM %[1]s WHERE id = %s", data("layout_new"), c))
	exec(fmt.Sprintf("ALTER TABLE %s DELETE WHERE id = %s AND metric_hash = 0 SETTINGS mutations_sync = 2", data("layout_new"), c))
	wantNew := map[string][]int64{}
	for k, v := range want {
		wantNew[k] = slices.Clone(v)
	}
	wantNew[`{__name__="up", job="a"}`] = []int64{0, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000, 6000, 7000, 7000, 8000, 9000}
	for k, v := range wantNew {
		if k != `{__name__="up", job="a"}` {
			for i := range v {
				v[i] *= 1000
			}
		}
	}
	load("layout_old", true)
	for k, v := range want {
		for i := range v {
			v[i] *= 1000
		}
		want[k] = v
	}

	q := New(Target{Engine: eng})
	read := func(db string) map[string][]int64 {
		t.Helper()
		q.fixed.Database = db
		qr, _ := q.Querier(0, 100_000)
		got := map[string][]int64{}
		for _, m := range []*labels.Matcher{
			labels.MustNewMatcher(labels.MatchEqual, "__name__", "up"), labels.MustNewMatcher(labels.MatchEqual, "__name__", "other"),
		} {
			set := qr.Select(ctx, true, &storage.SelectHints{Start: 0, End: 100_000}, m)
			for set.Next() {
				s := set.At()
				ts := sampleTimes(s)
				got[s.Labels().String()] = ts
			}
			if err := set.Err(); err != nil {
				t.Fatalf("%s %s: %v", db, m, err)
			}
		}
		// A selector naming no metric by equality (the engine hashes the names), and one
		// naming it and a label: the same series as by name.
		for _, c := range []struct {
			ms     []*labels.Matcher
			series int
		}{
			{[]*labels.Matcher{labels.MustNewMatcher(labels.MatchRegexp, "__name__", "up|other")}, len(got)},
			{[]*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "up"), labels.MustNewMatcher(labels.MatchEqual, "job", "a")}, 1},
		} {
			set := qr.Select(ctx, true, &storage.SelectHints{Start: 0, End: 100_000}, c.ms...)
			n := 0
			for set.Next() {
				s := set.At()
				ts := sampleTimes(s)
				if !slices.Equal(ts, got[s.Labels().String()]) {
					t.Errorf("%s %s by %v: %v, by name %v", db, s.Labels(), c.ms, ts, got[s.Labels().String()])
				}
				n++
			}
			if err := set.Err(); err != nil || n != c.series {
				t.Fatalf("%s by %v: %d series, %v", db, c.ms, n, err)
			}
		}
		return got
	}
	for _, c := range []struct {
		db   string
		want map[string][]int64
	}{{"layout_new", wantNew}, {"layout_old", want}, {"layout_old", want}, {"layout_new", wantNew}} {
		if got := read(c.db); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.db, got, c.want)
		}
	}
	if _, ok := q.unhashed.Load("layout_new"); ok {
		t.Error("the table led by metric_hash was read as one made before it")
	}
	if _, ok := q.unhashed.Load("layout_old"); !ok {
		t.Error("the table made before metric_hash was not remembered as such")
	}
}

// sampleTimes are the times of s's samples, in the order its iterator gives them.
func sampleTimes(s storage.Series) []int64 {
	it := s.Iterator(nil)
	var ts []int64
	for it.Next() != 0 {
		tm, _ := it.At()
		ts = append(ts, tm)
	}
	return ts
}
