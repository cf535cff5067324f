package promread

import (
	"fmt"
	"math"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/svc-data/svc/query/promstore"
	"github.com/svc-data/svc/query/sqlquote"
)

// DateTime64(3)'s range (1900-01-01 to 2299-12-31), to which Prometheus's open time bounds
// (math.MinInt64, math.MaxInt64) are clamped.
const (
	minEngineMillis = -2208988800000
	maxEngineMillis = 10413791999999
)

func clampMillis(t int64) int64 { return max(minEngineMillis, min(maxEngineMillis, t)) }

// timeLiteral is a millisecond timestamp as a DateTime64(3, 'UTC') expression.
func timeLiteral(ms int64) string {
	return "fromUnixTimestamp64Milli(toInt64(" + strconv.FormatInt(clampMillis(ms), 10) + "), 'UTC')"
}

// labelColumn is the expression reading label name on the tags table: metric_name for
// __name__, else the tags map's value, which is ” when the series has no such label, as
// Prometheus reads an absent label.
func labelColumn(name string) string {
	if name == promstore.MetricNameLabel {
		return "metric_name"
	}
	return "tags[" + sqlquote.String(name) + "]"
}

// anchoredRegex is a matcher's regular expression as Prometheus runs it (labels.
// NewFastRegexMatcher): parsed as Perl syntax with . matching newlines, printed back and
// anchored as ^(?s:...)$. The engine's match() runs RE2, whose syntax Go's regexp
// package implements; Go's printed form stays inside it.
func anchoredRegex(re string) (string, error) {
	parsed, err := syntax.Parse(re, syntax.Perl|syntax.DotNL)
	if err != nil {
		return "", err
	}
	return "^(?s:" + parsed.String() + ")$", nil
}

// matcherSQL is the predicate on the tags table of one label matcher.
func matcherSQL(m *labels.Matcher) (string, error) {
	col := labelColumn(m.Name)
	switch m.Type {
	case labels.MatchEqual:
		return col + " = " + sqlquote.String(m.Value), nil
	case labels.MatchNotEqual:
		return col + " != " + sqlquote.String(m.Value), nil
	case labels.MatchRegexp, labels.MatchNotRegexp:
		re, err := anchoredRegex(m.Value)
		if err != nil {
			return "", fmt.Errorf("regular expression %q: %w", m.Value, err)
		}
		// Shortcuts the engine would not see: .* matches everything, .+ anything non-empty.
		switch m.Value {
		case ".*":
			if m.Type == labels.MatchRegexp {
				return "1", nil
			}
			return "0", nil
		case ".+":
			if m.Type == labels.MatchRegexp {
				return col + " != ''", nil
			}
			return col + " = ''", nil
		}
		p := "match(" + col + ", " + sqlquote.String(re) + ")"
		if m.Type == labels.MatchNotRegexp {
			p = "NOT " + p
		}
		return p, nil
	}
	return "", fmt.Errorf("unknown matcher type %v", m.Type)
}

// whereSQL is the conjunction of the matchers' predicates ("1" for none).
func whereSQL(ms []*labels.Matcher) (string, error) {
	if len(ms) == 0 {
		return "1", nil
	}
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		p, err := matcherSQL(m)
		if err != nil {
			return "", err
		}
		parts = append(parts, "("+p+")")
	}
	return strings.Join(parts, " AND "), nil
}

// table is a promstore table of the engine database db.
func table(db, name string) string { return sqlquote.Ident(db) + "." + sqlquote.Ident(name) }

// seriesSQL selects the series (id, metric_name, tags) of database db that the matchers
// select and that were written between mint and maxt (inclusive). The tags table keeps
// one row per series and insert, folded by the engine in the background, so rows are
// grouped by id here.
func seriesSQL(db string, ms []*labels.Matcher, mint, maxt int64) (string, error) {
	where, err := whereSQL(ms)
	if err != nil {
		return "", err
	}
	having := ""
	if mint > math.MinInt64 || maxt < math.MaxInt64 {
		having = fmt.Sprintf(" HAVING max(max_time) >= %s AND min(min_time) <= %s", timeLiteral(mint), timeLiteral(maxt))
	}
	return fmt.Sprintf("SELECT id, metric_name, tags FROM %s WHERE %s GROUP BY id, metric_name, tags%s",
		table(db, promstore.TagsTable), where, having), nil
}

// idsSQL selects the ids of database db's series whose tags rows satisfy where (whereSQL
// of the matchers), written at any time: a superset of seriesSQL's series (no time
// bound, the series' rows not folded), and about half its cost, for the conditions on
// the sample tables. Their rows are joined to seriesSQL's series in Go, where a row of
// any other series is dropped, as one the matchers refuse.
func idsSQL(db, where string) string {
	return fmt.Sprintf("SELECT id FROM %s WHERE %s", table(db, promstore.TagsTable), where)
}

// flaggedSeriesSQL is sel (seriesSQL) with a fourth column saying whether the series has
// native histogram samples between mint and maxt (inclusive); ids is idsSQL of the same
// matchers, which keeps the histograms read to the selected series' granules.
func flaggedSeriesSQL(db, sel, ids string, mint, maxt int64) string {
	return fmt.Sprintf("SELECT id, metric_name, tags, id IN (SELECT id FROM %s WHERE id IN (%s) AND timestamp >= %s AND timestamp <= %s) FROM (%s)",
		table(db, promstore.HistogramsTable), ids, timeLiteral(mint), timeLiteral(maxt), sel)
}

// histogramsSQL selects the native histograms between mint and maxt (inclusive) of the
// series ids (idsSQL) selects, one row per series with any: its id and one array per
// field (histogramsOf), aligned, not ordered.
func histogramsSQL(db, ids string, mint, maxt int64) string {
	inRange := fmt.Sprintf("id IN (%s) AND timestamp >= %s AND timestamp <= %s", ids, timeLiteral(mint), timeLiteral(maxt))
	return fmt.Sprintf("SELECT id, groupArray(toUnixTimestamp64Milli(timestamp)) AS ts, groupArray(counter_reset_hint) AS hint, groupArray(schema) AS schema, "+
		"groupArray(reinterpretAsUInt64(zero_threshold)) AS zt, groupArray(reinterpretAsUInt64(zero_count)) AS zc, groupArray(reinterpretAsUInt64(count)) AS cnt, groupArray(reinterpretAsUInt64(sum)) AS sum, "+
		"groupArray(arrayMap(s -> s.1, positive_spans)) AS po, groupArray(arrayMap(s -> s.2, positive_spans)) AS pl, groupArray(positive_buckets) AS pb, "+
		"groupArray(arrayMap(s -> s.1, negative_spans)) AS no, groupArray(arrayMap(s -> s.2, negative_spans)) AS nl, groupArray(negative_buckets) AS nb, groupArray(custom_values) AS cv "+
		"FROM %s WHERE %s GROUP BY id", table(db, promstore.HistogramsTable), inRange)
}
