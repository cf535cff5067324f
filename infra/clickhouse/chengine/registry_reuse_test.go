package chengine

import (
	"testing"
	"time"
)

// TestIDReusedAfterItsStatementEnds: a statement registering an id that an ending
// statement still holds waits for it instead of failing with code 216; an id that stays
// busy is still refused.
func TestIDReusedAfterItsStatementEnds(t *testing.T) {
	g := newRegistry()
	first, err := g.add("q", "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		time.Sleep(50 * time.Millisecond) // the previous statement is still closing
		g.remove(first)
	}()
	second, err := g.add("q", "SELECT 2")
	if err != nil {
		t.Fatalf("the id of an ending statement was refused: %v", err)
	}
	<-ended
	start := time.Now()
	if _, err := g.add("q", "SELECT 3"); err == nil {
		t.Fatal("an id still running was accepted")
	}
	if time.Since(start) < idReuseWait {
		t.Fatalf("refused after %v, before waiting %v", time.Since(start), idReuseWait)
	}
	g.remove(second)
}

// TestIDFreedAfterItsAbortReturns: the next statement of an id waits until an abort of the
// previous one has returned, so that a late KILL cannot reach it (chengine trusts the end
// of a short stream of a statement nobody cancelled; see quickEnd).
func TestIDFreedAfterItsAbortReturns(t *testing.T) {
	g := newRegistry()
	first, err := g.add("q", "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	release, returned := make(chan struct{}), make(chan struct{})
	first.setAbort(func() {
		<-release
		close(returned)
	})
	first.cancel()
	g.remove(first)
	if !first.wasCancelled() {
		t.Fatal("cancel not recorded")
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		close(release)
	}()
	second, err := g.add("q", "SELECT 2")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	default:
		t.Fatal("the id was reused while an abort of its previous statement was in flight")
	}
	// A cancel after the end aborts nothing.
	second.setAbort(func() { t.Error("abort of an ended statement") })
	g.remove(second)
	second.cancel()
	if _, err := g.add("q", "SELECT 3"); err != nil {
		t.Fatal(err)
	}
}
