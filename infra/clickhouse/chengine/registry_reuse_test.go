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
