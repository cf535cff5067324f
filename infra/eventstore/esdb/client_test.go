package esdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	esclient "github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/svc-data/svc/projections/es"
)

// These tests drive the real client against addresses where no EventStoreDB answers: what
// they check (failing fast, honouring contexts, recovering after the client gives up,
// closing) needs no server.

// refusedURL returns a connection string to a local port nobody listens on, with a short
// discovery so that each failure takes well under a second.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return fmt.Sprintf("esdb://admin:secret@%s?tls=false&maxDiscoverAttempts=2&discoveryInterval=10&gossipTimeout=1", addr)
}

// silentURL returns a connection string to a local port that accepts connections and
// never answers, so that the client's discovery blocks until its own timeout.
func silentURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return fmt.Sprintf("esdb://%s?tls=false&maxDiscoverAttempts=1&gossipTimeout=1", l.Addr())
}

func (s *Store) current() *esclient.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

func TestOpenUnreachableFails(t *testing.T) {
	url := refusedURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Open(ctx, url)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded with nothing listening")
	}
	if classify(err) != failRetryable || !strings.Contains(err.Error(), "is unavailable") {
		t.Fatalf("Open error = %v; want it classified retryable with the remedy", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("Open error shows the password: %v", err)
	}
}

func TestOpenHonoursContextDuringDiscovery(t *testing.T) {
	url := silentURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := Open(ctx, url)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded against a silent port")
	}
	// The client is still discovering (for a second, with gossipTimeout=1); Open must not
	// wait for it.
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 700*time.Millisecond {
		t.Fatalf("Open = %v after %v; want DeadlineExceeded promptly", err, time.Since(start))
	}
}

func TestParseErrorHidesPassword(t *testing.T) {
	_, err := newStore("esdb://admin:hunter2@localhost:notaport")
	if err == nil {
		t.Fatal("bad connection string accepted")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error shows the password: %v", err)
	}
}

// After a failed discovery the client refuses every later call for good; the store must
// swap in a new client, so that it works again once the server is back.
func TestStoreRecoversAfterClientGivesUp(t *testing.T) {
	s, err := newStore(refusedURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err = s.Append(ctx, "s", es.Any(), es.NewEvent{Type: "x", Data: []byte(`{}`)})
	if err == nil || classify(err) != failRetryable {
		t.Fatalf("first append = %v; want a retryable error", err)
	}
	first := s.current()
	_, err = s.Append(ctx, "s", es.Any(), es.NewEvent{Type: "x", Data: []byte(`{}`)})
	if err == nil || isConnectionClosed(err) {
		t.Fatalf("second append = %v; want a fresh attempt, not the dead client's refusal", err)
	}
	if s.current() == first {
		t.Fatal("the dead client was not replaced")
	}
	// Reads go through the same path.
	if _, err := es.Collect(ctx, s.ReadAll(ctx, 0)); err == nil || isConnectionClosed(err) {
		t.Fatalf("read = %v; want a fresh attempt", err)
	}
}

func TestClosedStore(t *testing.T) {
	s, err := newStore(refusedURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	ctx := context.Background()
	if _, err := s.Append(ctx, "s", es.Any(), es.NewEvent{Type: "x"}); !errors.Is(err, es.ErrClosed) {
		t.Fatalf("append after close = %v, want es.ErrClosed", err)
	}
	if _, err := es.Collect(ctx, s.ReadStream(ctx, "s", 0)); !errors.Is(err, es.ErrClosed) {
		t.Fatalf("read after close = %v, want es.ErrClosed", err)
	}
}

func TestCloseCancelsCallsUnderWay(t *testing.T) {
	s, err := newStore(silentURL(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	it := s.ReadAll(ctx, 0) // blocks in discovery
	done := make(chan error, 1)
	go func() {
		_, err := es.Collect(ctx, it)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, es.ErrClosed) && classify(err) != failRetryable {
			t.Fatalf("read cut off by Close = %v; want es.ErrClosed (or the discovery's own failure)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read under way did not end when the store closed")
	}
}

func TestAppendRejectsBeforeCalling(t *testing.T) {
	s, err := newStore(refusedURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Append(canceled, "s", es.Any(), es.NewEvent{Type: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("append with a canceled context = %v", err)
	}
	if _, err := s.Append(context.Background(), "$s", es.Any(), es.NewEvent{Type: "x"}); err == nil {
		t.Fatal("append to a system stream accepted")
	}
	if s.current() != nil {
		t.Fatal("a rejected append reached the client")
	}
}

func TestCallPanicIsAnError(t *testing.T) {
	s, err := newStore(refusedURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.do(context.Background(), func(context.Context, *esclient.Client) error { panic("unreachable code") })
	if err == nil || !strings.Contains(err.Error(), "unreachable code") {
		t.Fatalf("do = %v, want the panic as an error", err)
	}
}
