package spl

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	now := time.Date(2024, 3, 31, 12, 0, 0, 0, time.UTC)
	f := func(earliest, latest string, from, to time.Time, hasFrom bool) {
		t.Helper()
		w, err := ParseWindow(TimeBound(earliest), TimeBound(latest), now)
		if err != nil {
			t.Fatalf("%q %q: %v", earliest, latest, err)
		}
		if w.HasEarliest != hasFrom || (hasFrom && !w.Earliest.Equal(from)) || !w.Latest.Equal(to) {
			t.Errorf("%q %q: got %+v", earliest, latest, w)
		}
	}
	f("", "", now.Add(-24*time.Hour), now, true)
	f("0", "now", time.Time{}, now, false)
	f("1700000000", "1700000060.25", time.Unix(1700000000, 0), time.UnixMilli(1700000060250), true)
	f("-15m", "-1m", now.Add(-15*time.Minute), now.Add(-time.Minute), true)
	f("-2h", "NOW", now.Add(-2*time.Hour), now, true)
	f("-7d", "", now.Add(-7*24*time.Hour), now, true)
	f("-1w", "", now.Add(-7*24*time.Hour), now, true)
	f("-30s", "", now.Add(-30*time.Second), now, true)
	f("-3minutes", "", now.Add(-3*time.Minute), now, true)
	f("-1mon", "", time.Date(2024, 3, 2, 12, 0, 0, 0, time.UTC), now, true) // AddDate normalises Feb 31
	f("-1y", "", time.Date(2023, 3, 31, 12, 0, 0, 0, time.UTC), now, true)

	bad := func(earliest, latest, want string) {
		t.Helper()
		_, err := ParseWindow(TimeBound(earliest), TimeBound(latest), now)
		es, ok := AsErrors(err)
		if !ok || es.StatusCode() != 400 || !strings.Contains(err.Error(), want) {
			t.Errorf("%q %q: got %v, want %q", earliest, latest, err, want)
		}
	}
	bad("+1h", "", "must be negative")
	bad("-1h@h", "", "snapping")
	bad("-1fortnight", "", "unknown unit")
	bad("yesterday", "", "use epoch seconds")
	bad("-1", "", "use epoch seconds")
	bad("-1h", "-2h", "must be before latest")
	bad("now", "", "must be before latest")
	bad("99999999999999", "", "out of range")
	bad("bad", "worse", "latest")

	var r Request
	if err := json.Unmarshal([]byte(`{"spl":"x","earliest":1700000000,"latest":"now","include_field_statistics":true}`), &r); err != nil || r.Earliest != "1700000000" || r.Latest != "now" || !r.IncludeFieldStatistics {
		t.Errorf("request decoding: %+v, %v", r, err)
	}
	if err := json.Unmarshal([]byte(`{"earliest":{}}`), &r); err == nil {
		t.Error("object accepted as a time bound")
	}
}

func TestValidate(t *testing.T) {
	if err := Validate(`error | timechart count BY host | where count > 0`, "-24h", "now"); err != nil {
		t.Errorf("valid search: %v", err)
	}
	for _, c := range []struct{ spl, earliest, want string }{
		{`error | bogus`, "-1h", "not supported"},
		{`error`, "+1h", "must be negative"},
		{`error | timechart span=1s count`, "-7d", "buckets"},
	} {
		err := Validate(c.spl, c.earliest, "now")
		if es, ok := AsErrors(err); !ok || es.StatusCode() != 400 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", c.spl, err)
		}
	}
}

// TestWindowErrorsNameTheirBound: a time-window error names the request field it is
// about (an alert answers it as query.earliest or query.latest), an inverted window
// earliest.
func TestWindowErrorsNameTheirBound(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		earliest, latest TimeBound
		want             string
	}{
		{"-5q", "now", "earliest"},
		{"-1h", "soon", "latest"},
		{"-1m", "-2m", "earliest"},
	} {
		_, err := ParseWindow(c.earliest, c.latest, now)
		es, ok := AsErrors(err)
		if !ok || len(es) != 1 || es[0].Code != CodeTimeWindow || es[0].Bound != c.want {
			t.Errorf("ParseWindow(%q, %q) = %v, want one error about %s", c.earliest, c.latest, err, c.want)
		}
	}
}
