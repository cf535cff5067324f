package esdb

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	esclient "github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-data/svc/projections/es"
)

// fakeStream plays a server stream: it returns its events, then end (or err), and, like
// the client's ReadStream, blocks in Recv when told to until it is closed.
type fakeStream struct {
	events []*esclient.ResolvedEvent
	end    error         // returned after the events; io.EOF when nil
	block  bool          // Recv blocks after the events until Close
	panics bool          // Recv panics after the events
	closed chan struct{} // closed by Close
	once   sync.Once
	recvs  atomic.Int32
}

func newFake(events ...*esclient.RecordedEvent) *fakeStream {
	f := &fakeStream{closed: make(chan struct{})}
	for _, e := range events {
		f.events = append(f.events, &esclient.ResolvedEvent{Event: e})
	}
	return f
}

func (f *fakeStream) Recv() (*esclient.ResolvedEvent, error) {
	i := int(f.recvs.Add(1)) - 1
	if f.panics && i == len(f.events) {
		panic("unreachable code") // as the client does on a response it does not know
	}
	select {
	case <-f.closed:
		return nil, io.EOF // what the client answers once closed
	default:
	}
	if i < len(f.events) {
		return f.events[i], nil
	}
	if f.block {
		<-f.closed
		return nil, status.Error(codes.Canceled, "context canceled")
	}
	if f.end != nil {
		return nil, f.end
	}
	return nil, io.EOF
}

func (f *fakeStream) Close() { f.once.Do(func() { close(f.closed) }) }

func (f *fakeStream) isClosed() bool {
	select {
	case <-f.closed:
		return true
	default:
		return false
	}
}

// iterate starts an iterator over fake as the store would, and reports when the pump
// has released its hold on the client.
func iterate(t *testing.T, ctx context.Context, fake *fakeStream, conv func(*esclient.ResolvedEvent) (es.Event, bool, error),
	missingIsEmpty bool) (*iterator, <-chan struct{}) {
	t.Helper()
	released := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	it := startIterator(ctx, cancel, func() { close(released) }, reader{
		step: "read test",
		addr: "esdb://test",
		open: func(ctx context.Context) (recvStream, error) {
			// Like the client, a cancelled context tears the stream down.
			context.AfterFunc(ctx, fake.Close)
			return fake, nil
		},
		conv:           conv,
		missingIsEmpty: missingIsEmpty,
	})
	return it, released
}

func waitReleased(t *testing.T, released <-chan struct{}) {
	t.Helper()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the iterator's goroutine did not finish")
	}
}

func TestIteratorReadsInOrderAndEnds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	fake := newFake(recorded("s", "a", 0, 100, `{}`, ""), recorded("s", "b", 1, 200, `{}`, ""),
		recorded("s", "c", 2, 300, `{}`, ""))
	it, released := iterate(t, ctx, fake, fromStreamRead, true)
	got, err := es.Collect(ctx, it)
	if err != nil || len(got) != 3 || got[0].Type != "a" || got[2].Type != "c" || got[2].Position != 300 {
		t.Fatalf("collect = %+v, %v", got, err)
	}
	waitReleased(t, released)
	if !fake.isClosed() {
		t.Fatal("server stream left open at the end")
	}
}

func TestIteratorAllSkipsAndResumesAfter(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	fake := newFake(
		recorded("s", "seen", 4, 500, `{}`, ""), // the event at after: the read starts there
		recorded("$stats-1", "$statsCollected", 0, 600, `{}`, ""),
		recorded("s", "$metadata", 5, 700, `{}`, ""),
		recorded("t", "new", 0, 800, `{}`, ""),
	)
	it, released := iterate(t, ctx, fake, fromAllRead(500), false)
	got, err := es.Collect(ctx, it)
	if err != nil || len(got) != 1 || got[0].Type != "new" || got[0].Position != 800 {
		t.Fatalf("collect = %+v, %v", got, err)
	}
	waitReleased(t, released)
}

func TestIteratorMissingStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	notFound, _ := esclient.FromError(status.Error(codes.NotFound, "stream 'x' is not found"))

	fake := newFake()
	fake.end = notFound
	it, released := iterate(t, ctx, fake, fromStreamRead, true)
	got, err := es.Collect(ctx, it)
	if err != nil || len(got) != 0 {
		t.Fatalf("missing stream read as %+v, %v; want empty", got, err)
	}
	waitReleased(t, released)

	// The same answer on a read that does not expect it is an error.
	fake = newFake()
	fake.end = notFound
	it, released = iterate(t, ctx, fake, fromAllRead(0), false)
	if _, err := es.Collect(ctx, it); err == nil {
		t.Fatal("not-found on $all read as empty")
	}
	waitReleased(t, released)
}

func TestIteratorServerError(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	down := status.Error(codes.Unavailable, "connection reset")
	fake := newFake(recorded("s", "a", 0, 100, `{}`, ""))
	fake.end = down
	it, released := iterate(t, ctx, fake, fromStreamRead, true)
	got, err := es.Collect(ctx, it)
	if len(got) != 1 || !errors.Is(err, down) || classify(err) != failRetryable {
		t.Fatalf("collect = %d events, %v; want 1 then the server's error", len(got), err)
	}
	waitReleased(t, released)
}

func TestIteratorTransactionEventFails(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	tx := recorded("s", "b", 1, 900, `{}`, "")
	tx.Position.Prepare = 850
	fake := newFake(recorded("s", "a", 0, 100, `{}`, ""), tx)
	it, released := iterate(t, ctx, fake, fromAllRead(0), false)
	got, err := es.Collect(ctx, it)
	if len(got) != 1 || !errors.Is(err, errTransactionEvent) {
		t.Fatalf("collect = %d events, %v; want 1 then errTransactionEvent", len(got), err)
	}
	waitReleased(t, released)
}

func TestIteratorNextHonoursItsContext(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fake := newFake(recorded("s", "a", 0, 100, `{}`, ""))
	fake.block = true // a live server with nothing more to send
	it, released := iterate(t, context.Background(), fake, fromStreamRead, true)
	defer it.Close()
	if !it.Next(context.Background()) {
		t.Fatalf("first Next: %v", it.Err())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if it.Next(ctx) {
		t.Fatal("Next returned an event that does not exist")
	}
	if !errors.Is(it.Err(), context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("Next = %v after %v; want DeadlineExceeded promptly", it.Err(), time.Since(start))
	}
	waitReleased(t, released)
	if !fake.isClosed() {
		t.Fatal("server stream left open after the reader gave up")
	}
	if it.Next(context.Background()) {
		t.Fatal("Next after failure returned true")
	}
}

func TestIteratorReadContextEndsStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	fake := newFake()
	fake.block = true
	it, released := iterate(t, ctx, fake, fromStreamRead, true)
	defer it.Close()
	cancel() // the context ReadStream was called with
	if it.Next(context.Background()) {
		t.Fatal("Next returned an event")
	}
	if !errors.Is(it.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want context.Canceled", it.Err())
	}
	waitReleased(t, released)
}

func TestIteratorCloseMidStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var events []*esclient.RecordedEvent
	for i := range 3 * readAhead { // more than the read-ahead, so the pump is blocked sending
		events = append(events, recorded("s", "x", uint64(i), uint64(100+i), `{}`, ""))
	}
	fake := newFake(events...)
	it, released := iterate(t, context.Background(), fake, fromStreamRead, true)
	if !it.Next(context.Background()) {
		t.Fatal(it.Err())
	}
	it.Close()
	it.Close() // safe twice
	waitReleased(t, released)
	if !fake.isClosed() {
		t.Fatal("server stream left open after Close")
	}
	if it.Next(context.Background()) || it.Err() != nil {
		t.Fatalf("Next after Close: err %v", it.Err())
	}
}

func TestIteratorCanceledBeforeOpen(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fake := newFake(recorded("s", "a", 0, 100, `{}`, ""))
	it, released := iterate(t, ctx, fake, fromStreamRead, true)
	if _, err := es.Collect(context.Background(), it); !errors.Is(err, context.Canceled) {
		t.Fatalf("collect = %v, want context.Canceled", err)
	}
	waitReleased(t, released)
	if fake.recvs.Load() != 0 {
		t.Fatal("read from a stream whose context had ended")
	}
}

func TestIteratorClientPanicIsAnError(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fake := newFake(recorded("s", "a", 0, 100, `{}`, ""))
	fake.panics = true
	it, released := iterate(t, context.Background(), fake, fromStreamRead, true)
	got, err := es.Collect(context.Background(), it)
	if len(got) != 1 || err == nil || !strings.Contains(err.Error(), "unreachable code") {
		t.Fatalf("collect = %d events, %v; want 1 then the panic as an error", len(got), err)
	}
	waitReleased(t, released)
	if !fake.isClosed() {
		t.Fatal("server stream left open after a panic")
	}
}
