// Package estest is the conformance suite every es.Store adapter must pass.
package estest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/es"
)

// Factory opens a store. Reopen, when not nil, closes nothing itself: it opens a second
// handle on the same underlying data after the first was closed, to check durability.
type Factory struct {
	Open   func(t *testing.T) es.Store
	Reopen func(t *testing.T) es.Store
}

// Run runs the whole suite. Stream names are unique per run, so adapters backed by a
// shared server (EventStoreDB) can run it repeatedly.
func Run(t *testing.T, f Factory) {
	run := uuid.NewString()[:8]
	name := func(s string) string { return fmt.Sprintf("test-%s-%s", run, s) }
	ctx := context.Background()

	t.Run("AppendAndReadStream", func(t *testing.T) {
		s := f.Open(t)
		defer s.Close()
		stream := name("a")
		res, err := s.Append(ctx, stream, es.NoStream(), ev("x.created", `{"n":1}`), ev("x.renamed", `{"n":2}`))
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		if res.Version != 1 {
			t.Fatalf("version after two events = %d, want 1", res.Version)
		}
		got, err := es.Collect(ctx, s.ReadStream(ctx, stream, 0))
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(got) != 2 || got[0].Type != "x.created" || got[1].Type != "x.renamed" ||
			string(got[1].Data) != `{"n":2}` || got[0].Version != 0 || got[1].Version != 1 ||
			got[0].Stream != stream || got[0].ID == uuid.Nil || got[0].Time.IsZero() {
			t.Fatalf("read back %+v", got)
		}
		if got[1].Position <= got[0].Position {
			t.Fatalf("positions not increasing: %d then %d", got[0].Position, got[1].Position)
		}
		tail, err := es.Collect(ctx, s.ReadStream(ctx, stream, 1))
		if err != nil || len(tail) != 1 || tail[0].Version != 1 {
			t.Fatalf("read from 1: %v %+v", err, tail)
		}
		missing, err := es.Collect(ctx, s.ReadStream(ctx, name("missing"), 0))
		if err != nil || len(missing) != 0 {
			t.Fatalf("missing stream: %v %+v", err, missing)
		}
	})

	t.Run("ExpectedVersion", func(t *testing.T) {
		s := f.Open(t)
		defer s.Close()
		stream := name("b")
		if _, err := s.Append(ctx, stream, es.Exact(0), ev("x", `{}`)); !errors.Is(err, es.ErrConcurrency) {
			t.Fatalf("exact on missing stream: %v, want ErrConcurrency", err)
		}
		if _, err := s.Append(ctx, stream, es.NoStream(), ev("x", `{}`)); err != nil {
			t.Fatalf("no stream: %v", err)
		}
		if _, err := s.Append(ctx, stream, es.NoStream(), ev("x", `{}`)); !errors.Is(err, es.ErrConcurrency) {
			t.Fatalf("no stream twice: %v, want ErrConcurrency", err)
		}
		if _, err := s.Append(ctx, stream, es.Exact(1), ev("x", `{}`)); !errors.Is(err, es.ErrConcurrency) {
			t.Fatalf("wrong exact: %v, want ErrConcurrency", err)
		}
		if _, err := s.Append(ctx, stream, es.Exact(0), ev("x", `{}`)); err != nil {
			t.Fatalf("right exact: %v", err)
		}
		res, err := s.Append(ctx, stream, es.Any(), ev("x", `{}`))
		if err != nil || res.Version != 2 {
			t.Fatalf("any: %v version %d", err, res.Version)
		}
		got, _ := es.Collect(ctx, s.ReadStream(ctx, stream, 0))
		if len(got) != 3 {
			t.Fatalf("a failed append left events: %d events", len(got))
		}
	})

	t.Run("ConcurrentWritersLoseNothing", func(t *testing.T) {
		s := f.Open(t)
		defer s.Close()
		stream := name("c")
		const writers, perWriter = 4, 10
		var wg sync.WaitGroup
		var mu sync.Mutex
		conflicts := 0
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					for {
						events, err := es.Collect(ctx, s.ReadStream(ctx, stream, 0))
						if err != nil {
							t.Errorf("read: %v", err)
							return
						}
						exp := es.NoStream()
						if len(events) > 0 {
							exp = es.Exact(events[len(events)-1].Version)
						}
						_, err = s.Append(ctx, stream, exp, ev("x", fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)))
						if errors.Is(err, es.ErrConcurrency) {
							mu.Lock()
							conflicts++
							mu.Unlock()
							continue
						}
						if err != nil {
							t.Errorf("append: %v", err)
							return
						}
						break
					}
				}
			})
		}
		wg.Wait()
		got, err := es.Collect(ctx, s.ReadStream(ctx, stream, 0))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != writers*perWriter {
			t.Fatalf("%d events after %d successful appends", len(got), writers*perWriter)
		}
		for i, e := range got {
			if e.Version != uint64(i) {
				t.Fatalf("event %d has version %d", i, e.Version)
			}
		}
		t.Logf("%d conflicts resolved through expected versions", conflicts)
	})

	t.Run("ReadAllInOrder", func(t *testing.T) {
		s := f.Open(t)
		defer s.Close()
		var last uint64
		all, err := es.Collect(ctx, s.ReadAll(ctx, 0))
		if err != nil {
			t.Fatal(err)
		}
		if len(all) > 0 {
			last = all[len(all)-1].Position
		}
		one, two := name("d1"), name("d2")
		if _, err := s.Append(ctx, one, es.Any(), ev("first", `{}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, two, es.Any(), ev("second", `{}`), ev("third", `{}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, one, es.Any(), ev("fourth", `{}`)); err != nil {
			t.Fatal(err)
		}
		got, err := es.Collect(ctx, s.ReadAll(ctx, last))
		if err != nil {
			t.Fatal(err)
		}
		var mine []es.Event
		for _, e := range got {
			if e.Stream == one || e.Stream == two {
				mine = append(mine, e)
			}
		}
		want := []string{"first", "second", "third", "fourth"}
		if len(mine) != len(want) {
			t.Fatalf("read all after %d: %d of our events, want %d", last, len(mine), len(want))
		}
		for i, e := range mine {
			if e.Type != want[i] {
				t.Fatalf("event %d is %s, want %s", i, e.Type, want[i])
			}
			if i > 0 && e.Position <= mine[i-1].Position {
				t.Fatalf("positions not increasing")
			}
		}
		for _, e := range got {
			if e.Position <= last {
				t.Fatalf("read all after %d returned position %d", last, e.Position)
			}
		}
	})

	t.Run("LargeAndBinarySafePayload", func(t *testing.T) {
		s := f.Open(t)
		defer s.Close()
		stream := name("e")
		big := make([]byte, 256<<10)
		for i := range big {
			big[i] = 'a' + byte(i%26)
		}
		data := []byte(`{"blob":"` + string(big) + `"}`)
		meta := []byte(`{"actor":"t"}`)
		if _, err := s.Append(ctx, stream, es.NoStream(), es.NewEvent{Type: "big", Data: data, Metadata: meta}); err != nil {
			t.Fatal(err)
		}
		got, err := es.Collect(ctx, s.ReadStream(ctx, stream, 0))
		if err != nil || len(got) != 1 || string(got[0].Data) != string(data) || string(got[0].Metadata) != string(meta) {
			t.Fatalf("large payload did not round-trip: %v", err)
		}
	})

	t.Run("CanceledContext", func(t *testing.T) {
		s := f.Open(t)
		defer s.Close()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Append(cctx, name("f"), es.Any(), ev("x", `{}`)); err == nil {
			t.Fatal("append with a canceled context succeeded")
		}
	})

	if f.Reopen != nil {
		t.Run("Durable", func(t *testing.T) {
			s := f.Open(t)
			stream := name("g")
			id := uuid.New()
			if _, err := s.Append(ctx, stream, es.NoStream(), es.NewEvent{ID: id, Type: "kept", Data: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2 := f.Reopen(t)
			defer s2.Close()
			got, err := es.Collect(ctx, s2.ReadStream(ctx, stream, 0))
			if err != nil || len(got) != 1 || got[0].ID != id {
				t.Fatalf("after reopen: %v %+v", err, got)
			}
			if _, err := s2.Append(ctx, stream, es.Exact(0), ev("next", `{}`)); err != nil {
				t.Fatalf("append after reopen: %v", err)
			}
		})
	}
}

func ev(typ, data string) es.NewEvent {
	return es.NewEvent{Type: typ, Data: []byte(data)}
}
