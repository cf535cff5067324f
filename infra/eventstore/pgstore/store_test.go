package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/svc-data/svc/infra/eventstore/pgstore"
	"github.com/svc-data/svc/infra/eventstore/pgstore/pgtest"
	"github.com/svc-data/svc/projections/es"
	"github.com/svc-data/svc/projections/es/estest"
)

// The race test runs this test binary again as its appending processes.
const (
	helperURL  = "PGSTORE_HELPER_URL"
	helperName = "PGSTORE_HELPER_NAME"
	helperN    = "PGSTORE_HELPER_N"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(helperURL); url != "" {
		n, _ := strconv.Atoi(os.Getenv(helperN))
		if err := appendFromProcess(url, os.Getenv(helperName), n); err != nil {
			fmt.Fprintln(os.Stderr, "appender:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func open(t *testing.T, url string) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformance runs the port's suite on the harness's PostgreSQL. Reopen is a second
// pool on the same database: an append is read back through a client that did not write it.
func TestConformance(t *testing.T) {
	url := pgtest.Database(t)
	o := func(t *testing.T) es.Store { return open(t, url) }
	estest.Run(t, estest.Factory{Open: o, Reopen: o})
}

// appendFromProcess is one racing process: n appends to the shared stream at the
// version it last read (retrying on a conflict) and n two-event appends to a stream of
// its own.
func appendFromProcess(url, name string, n int) error {
	ctx := context.Background()
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range n {
		for {
			events, err := es.Collect(ctx, s.ReadStream(ctx, "shared", 0))
			if err != nil {
				return err
			}
			exp := es.NoStream()
			if len(events) > 0 {
				exp = es.Exact(events[len(events)-1].Version)
			}
			_, err = s.Append(ctx, "shared", exp, es.NewEvent{Type: "shared", Data: fmt.Appendf(nil, `{"p":%q,"i":%d}`, name, i)})
			if errors.Is(err, es.ErrConcurrency) {
				continue
			}
			if err != nil {
				return err
			}
			break
		}
		if _, err := s.Append(ctx, "own-"+name, es.Any(),
			es.NewEvent{Type: "own", Data: fmt.Appendf(nil, `{"i":%d}`, i)},
			es.NewEvent{Type: "own", Data: fmt.Appendf(nil, `{"i":%d}`, i)}); err != nil {
			return err
		}
	}
	return nil
}

// TestAppendsRaceFromTwoProcesses: two OS processes append to one stream at expected
// versions and to streams of their own, while a catch-up subscriber (ReadAll after the
// last position it saw, woken by Watch) follows. Every append lands once, the shared
// stream's versions are 0..2n-1, and the subscriber saw exactly the store's final order:
// no event committed after it had read past its position.
func TestAppendsRaceFromTwoProcesses(t *testing.T) {
	url := pgtest.Database(t)
	s := open(t, url)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 60
	wake := s.Watch(ctx)

	var procs sync.WaitGroup
	errs := make(chan error, 2)
	for _, name := range []string{"a", "b"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperURL+"="+url, helperName+"="+name, helperN+"="+strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs.Go(func() {
			if err := cmd.Wait(); err != nil {
				errs <- fmt.Errorf("process %s: %w", name, err)
			}
		})
	}
	finished := make(chan struct{})
	go func() { procs.Wait(); close(finished) }()

	var seen []es.Event
	catchUp := func() {
		var after uint64
		if len(seen) > 0 {
			after = seen[len(seen)-1].Position
		}
		got, err := es.Collect(ctx, s.ReadAll(ctx, after))
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, got...)
	}
	// Follow until both processes exited, then once more: polling is the fallback.
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for done := false; !done; {
		catchUp()
		select {
		case <-finished:
			done = true
		case <-wake:
		case <-poll.C:
		}
	}
	catchUp()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	all, err := es.Collect(ctx, s.ReadAll(ctx, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * n * 3; len(all) != want {
		t.Fatalf("%d events stored, want %d", len(all), want)
	}
	if len(seen) != len(all) {
		t.Fatalf("the subscriber saw %d events, the store holds %d: it skipped some", len(seen), len(all))
	}
	for i := range all {
		if seen[i].ID != all[i].ID || seen[i].Position != all[i].Position {
			t.Fatalf("event %d: the subscriber saw position %d (%s), the store has %d (%s)", i,
				seen[i].Position, seen[i].ID, all[i].Position, all[i].ID)
		}
		if i > 0 && all[i].Position <= all[i-1].Position {
			t.Fatalf("positions not increasing at %d", i)
		}
	}
	shared, err := es.Collect(ctx, s.ReadStream(ctx, "shared", 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(shared) != 2*n {
		t.Fatalf("shared stream has %d events, want %d", len(shared), 2*n)
	}
	for i, e := range shared {
		if e.Version != uint64(i) {
			t.Fatalf("shared event %d has version %d", i, e.Version)
		}
	}
}

// TestWatchSignalsAnotherPoolsAppend: a follower's Watch wakes on an append made through
// a different connection pool (another node).
func TestWatchSignalsAnotherPoolsAppend(t *testing.T) {
	url := pgtest.Database(t)
	follower, writer := open(t, url), open(t, url)
	defer follower.Close()
	defer writer.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := follower.Watch(ctx)
	<-wake // the signal at the start: the listener is in place
	if _, err := writer.Append(ctx, "w", es.NoStream(), es.NewEvent{Type: "x", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-wake; !ok {
		t.Fatal("watch closed")
	}
	cancel()
	for range wake {
	}
}

// TestUnreachableIsUnavailable: once PostgreSQL cannot be reached (its connections cut,
// new ones refused, as on a node cut off from it), appends and reads fail with
// es.ErrUnavailable, which the API answers 503 with Retry-After; once it is reachable
// again, an answer of the server (a wrong version) is not unavailability.
func TestUnreachableIsUnavailable(t *testing.T) {
	u, err := url.Parse(pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	server := u.Host
	r := newRelay(t, "127.0.0.1:0", server)
	u.Host = r.ln.Addr().String()
	s := open(t, u.String())
	defer s.Close()
	ctx := context.Background()
	ev := es.NewEvent{Type: "x", Data: []byte(`{}`)}
	if _, err := s.Append(ctx, "s", es.Any(), ev); err != nil {
		t.Fatal(err)
	}
	r.close()
	if _, err := s.Append(ctx, "s", es.Any(), ev); !errors.Is(err, es.ErrUnavailable) {
		t.Errorf("append while unreachable: %v, want es.ErrUnavailable", err)
	}
	if _, err := es.Collect(ctx, s.ReadAll(ctx, 0)); !errors.Is(err, es.ErrUnavailable) {
		t.Errorf("read while unreachable: %v, want es.ErrUnavailable", err)
	}
	r = newRelay(t, u.Host, server)
	defer r.close()
	if _, err := s.Append(ctx, "s", es.NoStream(), ev); !errors.Is(err, es.ErrConcurrency) || errors.Is(err, es.ErrUnavailable) {
		t.Errorf("append at a wrong version once reachable: %v, want es.ErrConcurrency alone", err)
	}
}

// relay forwards connections made to its address to target until close, which cuts
// every connection it forwarded; connections made after it are refused.
type relay struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newRelay(t *testing.T, listen, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, u)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
			go func() { _, _ = io.Copy(c, u); _ = c.Close() }()
		}
	}()
	return r
}

func (r *relay) close() {
	_ = r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		_ = c.Close()
	}
}
