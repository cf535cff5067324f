package spl

import (
	"fmt"
	"testing"
	"time"
)

// TestNewestFirstWithEqualTimes: the n newest events stop at the page (a bound on _time
// found first, so that whole documents are read only for the granules holding the page)
// and are still the n newest of every match when many events share a timestamp and the
// page ends inside such a group: the same times as sorting every match, each event once,
// each one a match.
func TestNewestFirstWithEqualTimes(t *testing.T) {
	eng := openTestEngine(t)
	var evs []event
	// 500 events at each of 120 times 12 minutes apart; half of them host a, half host b.
	// The newest time alone has 250 events of host a, so the probes of the window's newest
	// slices (see newestBound) find a page of 100 in the first, 300 in the second and
	// 10,000 only in the whole window.
	for i := range 60000 {
		host := "a"
		if i%2 == 1 {
			host = "b"
		}
		evs = append(evs, event{"_time": e2eStart.Add(time.Duration(i/500) * 12 * time.Minute), "host": host,
			"id": int64(i), "_raw": fmt.Sprintf("GET /item/%d status=200", i)})
	}
	env := &e2eEnv{eng: eng, table: loadEvents(t, eng, "spl_newest", evs), evs: evs}
	hostA := func(e event) bool { return e["host"] == "a" }
	for _, c := range []struct {
		spl   string
		n     int
		match func(event) bool
	}{
		{`host=a | head 100`, 100, hostA},                // inside the newest time's 250
		{`host=a | head 300`, 300, hostA},                // across two times
		{`host=a`, MaxOutputRows, hostA},                 // the console's request
		{`host=a GET | head 100 | eval x=1`, 100, hostA}, // the page is not the last stage
		{`host=nobody | head 5`, 0, func(event) bool { return false }},
	} {
		r := env.search(t, c.spl)
		all := env.where(c.match)
		want := times(all)[:min(c.n, len(all))]
		got := make([]string, len(r.Data))
		seen := map[float64]bool{}
		for i, row := range r.Data {
			got[i], _ = row["_time"].(string)
			id, _ := row["id"].(float64)
			if seen[id] || row["host"] != "a" {
				t.Fatalf("%s: row %d is %v (a repeat or not a match)", c.spl, i, row)
			}
			seen[id] = true
		}
		checkStrings(t, c.spl, got, want)
		if r.Truncated != (len(all) > MaxOutputRows && c.n == MaxOutputRows) {
			t.Fatalf("%s: truncated %v", c.spl, r.Truncated)
		}
		if c.n == 100 && c.spl == `host=a | head 100` {
			// The probe and the page's documents are read from the granules at the window's
			// end, not from every match (a sort of every match reads every event's document).
			if read, _ := r.Statistics["rows_read"].(float64); read >= float64(len(evs)) {
				t.Fatalf("%s read %v rows of %d", c.spl, read, len(evs))
			}
		}
	}
}
