package alerts

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
)

func TestRowValue(t *testing.T) {
	labels, v, err := rowValue(json.RawMessage(`{"host":"a","n":"12","zone":"eu"}`))
	if err != nil || v != 12 || labels["host"] != "a" || labels["zone"] != "eu" || len(labels) != 2 {
		t.Fatalf("%v %v %v", labels, v, err)
	}
	labels, v, err = rowValue(json.RawMessage(`{"value":3.5,"code":500}`))
	if err != nil || v != 3.5 || labels["code"] != "500" {
		t.Fatalf("%v %v %v", labels, v, err)
	}
	if _, _, err := rowValue(json.RawMessage(`{"host":"a"}`)); err == nil {
		t.Fatal("a row without a number must fail")
	}
}

// TestTransitionsFollowFor walks one group through pending, firing and resolved, and
// checks an evaluation over an already-recorded state records nothing new.
func TestTransitionsFollowFor(t *testing.T) {
	a := &catalog.Alert{ID: uuid.New(), Op: ">", Threshold: 5, ForSeconds: 60, Of: "value",
		Labels: map[string]string{"severity": "page"}, Annotations: map[string]string{"summary": "{{ $labels.host }} at {{ $value }}"}}
	t0 := time.Unix(1_000_000, 0).UTC()
	obs := func(v float64) result {
		l := map[string]string{"host": "a"}
		return result{groups: map[string]observed{groupKey(l): {labels: l, value: v}}}
	}
	var events []catalog.AlertEvent
	step := func(r result, at time.Time, want ...string) {
		t.Helper()
		ts := transitions(a, fold(events), r, at)
		var got []string
		for _, tr := range ts {
			got = append(got, tr.To)
			tr := tr
			events = append(events, catalog.AlertEvent{Version: uint64(len(events)), Type: catalog.EvAlertTransitioned, Transition: &tr})
		}
		if len(got) != len(want) {
			t.Fatalf("at %v: %v, want %v", at, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("at %v: %v, want %v", at, got, want)
			}
		}
	}
	step(obs(9), t0, StatePending)
	step(obs(9), t0.Add(30*time.Second))
	step(obs(9), t0.Add(60*time.Second), StateFiring)
	if tr := events[len(events)-1].Transition; !tr.Notify || tr.Annotations["summary"] != "a at 9" || tr.Labels["severity"] != "page" {
		t.Fatalf("firing transition %+v", tr)
	}
	step(obs(9), t0.Add(90*time.Second))
	step(obs(1), t0.Add(120*time.Second), StateResolved)
	step(obs(9), t0.Add(150*time.Second), StatePending)
	step(obs(1), t0.Add(160*time.Second), StateInactive)
	step(result{groups: map[string]observed{}, noData: true}, t0.Add(170*time.Second), StateNoData)
	step(result{err: errTest}, t0.Add(180*time.Second), StateError)
	step(obs(1), t0.Add(190*time.Second), StateOK)
}

type testErr struct{}

func (testErr) Error() string { return "boom" }

var errTest = testErr{}

func TestSilencedTransitionsDoNotNotify(t *testing.T) {
	until := time.Unix(2_000_000, 0)
	a := &catalog.Alert{ID: uuid.New(), Op: ">", Threshold: 0, Of: "row_count", SilencedUntil: &until}
	l := map[string]string{}
	ts := transitions(a, fold(nil), result{groups: map[string]observed{groupKey(l): {labels: l, value: 1}}}, time.Unix(1_000_000, 0))
	if len(ts) != 1 || ts[0].To != StateFiring || ts[0].Notify || !ts[0].Silenced {
		t.Fatalf("%+v", ts)
	}
}

func TestSign(t *testing.T) {
	// HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog"), RFC 4231-style vector.
	got := Sign("key", []byte("The quick brown fox jumps over the lazy dog"))
	if got != "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8" {
		t.Fatal(got)
	}
}

// TestFoldInPiecesIsTheWholeFold: the state cache folds a stream's tail onto the fold
// of its head; that must be the fold of the whole stream, delivery answers of the
// groups' latest transitions included, however the stream is cut.
func TestFoldInPiecesIsTheWholeFold(t *testing.T) {
	d := uuid.New()
	var events []catalog.AlertEvent
	add := func(e catalog.AlertEvent) {
		e.Version = uint64(len(events))
		events = append(events, e)
	}
	for i := range 40 {
		g := []string{"a", "b", "c"}[i%3]
		to := []string{StateFiring, StateResolved}[(i/3)%2]
		add(catalog.AlertEvent{Type: catalog.EvAlertTransitioned, Transition: &catalog.AlertTransition{Group: g, To: to, Notify: true}})
		v := uint64(len(events) - 1)
		if i%4 != 3 { // every fourth transition's delivery fails, and is not yet delivered
			add(catalog.AlertEvent{Type: catalog.EvAlertDelivered, Delivery: &catalog.AlertDelivery{Transition: v, DestinationID: d}})
		} else {
			add(catalog.AlertEvent{Type: catalog.EvAlertDeliveryFailed, Delivery: &catalog.AlertDelivery{Transition: v, DestinationID: d, Error: "500"}})
		}
	}
	whole := fold(events)
	for cut := 1; cut < len(events); cut += 7 {
		st := fold(events[:cut])
		st.apply(events[cut:])
		for _, k := range whole.keys() {
			w, g := whole.groups[k], st.groups[k]
			if g == nil || g.Last != w.Last || g.State != w.State {
				t.Fatalf("cut %d: group %s %+v, want %+v", cut, k, g, w)
			}
			dk := dkey{w.Last, d}
			if st.delivered[dk] != whole.delivered[dk] || st.failed[dk] != whole.failed[dk] {
				t.Fatalf("cut %d: group %s delivered %v failed %d, want %v %d", cut, k, st.delivered[dk], st.failed[dk], whole.delivered[dk], whole.failed[dk])
			}
		}
		if n := len(st.delivered) + len(st.failed); n > 2*len(st.groups) {
			t.Fatalf("cut %d: %d delivery answers kept for %d groups", cut, n, len(st.groups))
		}
	}
}

// TestScheduleOffsetSpreads: offsets are whole seconds inside the interval, the same
// for an alert every time, and spread 1,000 alerts at 60 s over the minute.
func TestScheduleOffsetSpreads(t *testing.T) {
	perSecond := map[time.Duration]int{}
	for range 1000 {
		id := uuid.New()
		o := scheduleOffset(id, time.Minute)
		if o < 0 || o >= time.Minute || o%time.Second != 0 || scheduleOffset(id, time.Minute) != o {
			t.Fatalf("offset %v", o)
		}
		perSecond[o]++
	}
	if len(perSecond) < 55 {
		t.Fatalf("1,000 alerts fall on %d of 60 seconds", len(perSecond))
	}
	for _, n := range perSecond {
		if n > 40 {
			t.Fatalf("%d alerts in one second", n)
		}
	}
	if o := scheduleOffset(uuid.New(), time.Second); o != 0 {
		t.Fatalf("1 s interval: offset %v", o)
	}
}

// TestDueOncePerInterval: over any span of interval seconds, the tick finds an alert due
// exactly once, at a second that is its offset past a multiple of the interval.
func TestDueOncePerInterval(t *testing.T) {
	for _, interval := range []int{1, 7, 60, 3600} {
		a := &catalog.Alert{ID: uuid.New(), IntervalSeconds: interval}
		start := time.Unix(1_700_000_123, 0).UTC()
		var hits []time.Time
		for i := range 2 * interval {
			if at := start.Add(time.Duration(i) * time.Second); due(a, at) {
				hits = append(hits, at)
			}
		}
		if len(hits) != 2 || hits[1].Sub(hits[0]) != time.Duration(interval)*time.Second {
			t.Fatalf("interval %d: due at %v", interval, hits)
		}
		if off := scheduleOffset(a.ID, time.Duration(interval)*time.Second); hits[0].Unix()%int64(interval) != int64(off/time.Second) {
			t.Fatalf("interval %d: due at %v, offset %v", interval, hits[0], off)
		}
	}
}
