package promread

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/sqlquote"
)

// TestRegexMatchersAgreeWithTheEngine runs every regex matcher's predicate on the engine
// (match(), RE2) over values and checks it against Prometheus's own matcher, so that the
// push-down selects what Prometheus selects.
func TestRegexMatchersAgreeWithTheEngine(t *testing.T) {
	url, _ := chtest.Engine(t)
	eng := chtest.Client(t, url)
	values := []string{"", "a", "abc", "ABC", "a\nb", "a.b", "a-b", "foo", "foobar", "barfoo", "api-server", "10.0.0.1:9090", "ünï", "x|y", "(", "\\"}
	patterns := []string{".*", ".+", "a", "a.*", ".*b", "(?i)abc", "a.b", "foo|bar", "foo.*|.*bar", "a\\.b", "[a-c]+", "[^a]*", "api-.+",
		"10\\.0\\.0\\.[0-9]+:9090", "ü.*", "x\\|y", "\\(", "\\\\", "", "(a|)", ".", "a\nb", "^a$", "a$|b"}
	ctx := context.Background()
	for _, pat := range patterns {
		for _, typ := range []labels.MatchType{labels.MatchRegexp, labels.MatchNotRegexp} {
			m, err := labels.NewMatcher(typ, "l", pat)
			if err != nil {
				t.Fatalf("%q: %v", pat, err)
			}
			pred, err := matcherSQL(m)
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, v := range values {
				rows = append(rows, "map('l', "+sqlquote.String(v)+")")
			}
			sql := "SELECT toString(" + pred + ") FROM (SELECT arrayJoin([" + strings.Join(rows, ", ") + "]) AS tags)"
			got, err := eng.QueryStrings(ctx, sql)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			for i, v := range values {
				if want := m.Matches(v); (got[i] == "1") != want {
					t.Errorf("%s on %q: engine %s, Prometheus %v (%s)", m, v, got[i], want, pred)
				}
			}
		}
	}
}
