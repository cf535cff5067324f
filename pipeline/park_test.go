package pipeline

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestParkingSteps: a parked table's rows skip the insert for a step; once it ran out,
// exactly one batch tries again (the others still skip); another timeout doubles the step
// up to the bound and logs once; a landed insert unparks it; a try that neither landed nor
// timed out lets the next batch try.
func TestParkingSteps(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	p := parking{tables: map[uuid.UUID]*Parked{}}
	id := uuid.New()
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if p.skip(id, t0) || p.holds(id, t0) {
		t.Fatal("a table never parked is skipped")
	}
	p.park(id, at(0), time.Second, 4*time.Second, "r", log)
	p.park(id, at(0), time.Second, 4*time.Second, "r", log) // another partition, same step
	if n := strings.Count(logs.String(), "storage unavailable"); n != 1 {
		t.Fatalf("%d log lines for one step", n)
	}
	if !p.holds(id, at(500*time.Millisecond)) || !p.skip(id, at(500*time.Millisecond)) {
		t.Fatal("not skipped within its step")
	}
	if p.holds(id, at(time.Second)) {
		t.Fatal("held after its step")
	}
	if p.skip(id, at(time.Second)) {
		t.Fatal("the first batch after the step does not try")
	}
	if !p.skip(id, at(time.Second)) || !p.holds(id, at(time.Second)) {
		t.Fatal("a second batch tries while the first does")
	}
	for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second} {
		now := at(time.Duration(10*(i+1)) * time.Second)
		p.release(id)
		if p.skip(id, now) {
			t.Fatalf("step %d: no batch tries", i)
		}
		p.park(id, now, time.Second, 4*time.Second, "r", log)
		if got, _ := p.get(id); got.RetryAt.Sub(now) != want || got.Attempts != i+2 {
			t.Fatalf("step %d: %+v, want a step of %s", i, got, want)
		}
	}
	if n := strings.Count(logs.String(), "storage unavailable"); n != 4 {
		t.Fatalf("%d log lines for four steps", n)
	}
	p.landed(id, log)
	if _, ok := p.get(id); ok || p.skip(id, at(time.Hour)) {
		t.Fatal("still parked after an insert landed")
	}
}
