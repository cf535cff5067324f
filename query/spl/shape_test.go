package spl

import (
	"slices"
	"testing"
)

func TestAnalyze(t *testing.T) {
	f := func(src string, kind ResultKind, keys ...string) {
		t.Helper()
		sh, err := Analyze(src, "-5m", "now")
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if sh.Kind != kind || !slices.Equal(sh.Keys, keys) || (sh.Keys == nil) != (keys == nil) {
			t.Fatalf("%s: %s %q, want %s %q", src, sh.Kind, sh.Keys, kind, keys)
		}
	}
	f("error", ResultEvents)
	f("error | head 5", ResultEvents)
	f("error | stats count", ResultStatistics, []string{}...)
	f("error | stats count BY host, status", ResultStatistics, "host", "status")
	f("error | stats count BY host | rename host AS h | sort - count", ResultStatistics, "h")
	f("error | chart count OVER host BY status", ResultStatistics, "host")
	f("error | timechart span=1m count", ResultStatistics, "_time")
	f("error | table host, status", ResultStatistics)
	if _, err := Analyze("error | stats count BY", "-5m", "now"); err == nil {
		t.Fatal("a search that does not parse must fail")
	} else if es, ok := AsErrors(err); !ok || es[0].Position.Column == 0 {
		t.Fatalf("want a positioned error, got %v", err)
	}
	if _, err := Analyze("error", "-5q", "now"); err == nil {
		t.Fatal("a bad earliest must fail")
	}
}

func TestWithCount(t *testing.T) {
	f := func(src, want string) {
		t.Helper()
		got, err := WithCount(src, "value")
		if err != nil || got != want {
			t.Fatalf("%s: %q %v, want %q", src, got, err, want)
		}
		if _, err := Parse(got); err != nil {
			t.Fatalf("%s: %q does not parse back: %v", src, got, err)
		}
	}
	f("error", "error | stats count AS value")
	f(`status>=500 host="web 1" | head 3`, `status>=500 AND host="web 1" | head 3 | stats count AS value`)
	f("", "| stats count AS value")
}
