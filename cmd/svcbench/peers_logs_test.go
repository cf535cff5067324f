package main

import (
	"strings"
	"testing"
)

// TestCompareTimeline reads VictoriaLogs' two timeline answers: /select/logsql/hits, and
// stats by _time as JSON lines, of which a single bucket is one line (an object that
// parses as a hits answer without hits: it read as an empty timeline).
func TestCompareTimeline(t *testing.T) {
	type bucket = struct {
		Time        string
		SpanSeconds int64 `json:"span_seconds"`
		Count       int64
	}
	ours := []bucket{{Time: "2026-12-01T14:00:00Z", SpanSeconds: 3600, Count: 100}, {Time: "2026-12-01T15:00:00Z", SpanSeconds: 3600}}
	for name, hits := range map[string]string{
		"hits":     `{"hits":[{"fields":{},"timestamps":["2026-12-01T14:00:00Z"],"values":[100],"total":100}]}`,
		"one line": `{"_time":"2026-12-01T14:00:00Z","count":"100"}` + "\n",
		// The bucket VictoriaLogs' end falls in, empty, as svcd's zero-filled one.
		"empty end": `{"hits":[{"fields":{},"timestamps":["2026-12-01T14:00:00Z","2026-12-01T15:00:00Z"],"values":[100,0],"total":100}]}`,
	} {
		if got := compareTimeline(ours, []byte(hits)); !strings.HasPrefix(got, "equal (1 buckets, 100 events)") {
			t.Errorf("%s: %s", name, got)
		}
	}
	two := `{"_time":"2026-12-01T14:00:00Z","count":"60"}` + "\n" + `{"_time":"2026-12-01T15:00:00Z","count":"40"}` + "\n"
	if got := compareTimeline(ours, []byte(two)); strings.HasPrefix(got, "equal") {
		t.Errorf("two buckets against one: %s", got)
	}
}
