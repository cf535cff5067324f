package tables

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/svc-data/svc/query/sortkey"
	"github.com/svc-data/svc/query/sqlquote"
)

// A table created with an empty sorting key chooses one from its data, each time it
// makes a generation (so a later generation may choose differently as the data
// changes). The rule, applied to the sample of rows that creates the generation:
//
//  1. The time path: a path whose values the engine reads as DateTime or Date in at least
//     half of the rows. Among several, the first of timestamp, time, _time, @timestamp,
//     ts, event_time, eventTime, created_at, date wins, else the most frequent.
//  2. A dimension: a String path present in at least 90% of the rows with few distinct
//     values (at most a tenth of the rows, and at most 1,000). Among several, the first of
//     service_name, service.name, host, hostname, source, sourcetype, index, level,
//     severity_text, log_group, eventSource, kind wins, else the one with fewest values.
//  3. The key is "dimension, time", or whichever of the two was found, or none (rows in
//     insertion order) when neither was.
//
// DESCRIBE shows the chosen key as automatic_sorting_key and the engine's as
// physical_sorting_key.

var timeNames = []string{"timestamp", "time", "_time", "@timestamp", "ts", "event_time", "eventTime", "created_at", "date"}

var dimensionNames = []string{"service_name", "service.name", "host", "hostname", "source", "sourcetype", "index",
	"level", "severity_text", "log_group", "eventSource", "kind"}

type pathStat struct {
	path  string
	typ   string
	count int
}

// chooseKey returns the logical key an automatic table takes for sample, "" for none.
func chooseKey(ctx context.Context, e Engine, columnType string, sample [][]byte) (string, error) {
	if len(sample) == 0 {
		return "", nil
	}
	src := sampleSource(columnType, sample)
	lines, err := e.QueryStrings(ctx, fmt.Sprintf(
		"SELECT concat(p.1, '\\t', p.2, '\\t', toString(count())) FROM (SELECT arrayJoin(arrayZip(mapKeys(JSONAllPathsWithTypes(doc)), "+
			"mapValues(JSONAllPathsWithTypes(doc)))) AS p FROM %s) GROUP BY p", src))
	if err != nil {
		return "", fmt.Errorf("choose a sorting key: %w", err)
	}
	rows := len(sample)
	var times, strs []pathStat
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			continue
		}
		n, _ := strconv.Atoi(f[2])
		st := pathStat{path: f[0], typ: f[1], count: n}
		switch {
		case strings.HasPrefix(st.typ, "DateTime") || st.typ == "Date" || st.typ == "Date32":
			if n*2 >= rows {
				times = append(times, st)
			}
		case st.typ == "String" && n*10 >= rows*9 && strings.Count(st.path, ".") <= 1:
			strs = append(strs, st)
		}
	}
	timePath := pick(times, timeNames, func(a, b pathStat) bool { return a.count > b.count })
	// Few distinct values: measured only for the candidates, on the sample.
	var dims []pathStat
	for _, s := range strs {
		col := sortkey.Subcolumn(strings.Split(s.path, "."), "String")
		n, err := e.QueryStrings(ctx, fmt.Sprintf("SELECT toString(uniqExact(%s)) FROM %s", col, src))
		if err != nil || len(n) != 1 {
			continue
		}
		distinct, _ := strconv.Atoi(n[0])
		if distinct*10 <= rows && distinct <= 1000 && distinct > 0 {
			s.count = distinct
			dims = append(dims, s)
		}
	}
	dim := pick(dims, dimensionNames, func(a, b pathStat) bool { return a.count < b.count })
	var parts []string
	for _, p := range []string{dim, timePath} {
		if p != "" {
			parts = append(parts, quotePath(p))
		}
	}
	return strings.Join(parts, ", "), nil
}

// pick returns the candidate named first in preferred, else the best by less.
func pick(cands []pathStat, preferred []string, less func(a, b pathStat) bool) string {
	for _, name := range preferred {
		if i := slices.IndexFunc(cands, func(c pathStat) bool { return c.path == name }); i >= 0 {
			return cands[i].path
		}
	}
	if len(cands) == 0 {
		return ""
	}
	sort.Slice(cands, func(i, j int) bool {
		if less(cands[i], cands[j]) != less(cands[j], cands[i]) {
			return less(cands[i], cands[j])
		}
		return cands[i].path < cands[j].path
	})
	return cands[0].path
}

// quotePath renders a dotted path for a sorting key, quoting segments that need it.
func quotePath(p string) string {
	segs := strings.Split(p, ".")
	for i, s := range segs {
		plain := s != ""
		for j, r := range s {
			if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (j > 0 && r >= '0' && r <= '9')) {
				plain = false
			}
		}
		if !plain {
			segs[i] = sqlquote.Ident(s)
		}
	}
	return strings.Join(segs, ".")
}

func sampleSource(columnType string, sample [][]byte) string {
	var data strings.Builder
	for _, row := range sample {
		if data.Len()+len(row) > maxSampleBytes && data.Len() > 0 {
			break
		}
		data.Write(row)
		data.WriteByte('\n')
	}
	return fmt.Sprintf("format(JSONAsObject, %s, %s)", sqlquote.String("doc "+columnType), sqlquote.String(data.String()))
}
