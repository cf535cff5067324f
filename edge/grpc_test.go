package edge

import (
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-data/svc/edge/ingest"
	"github.com/svc-data/svc/pipeline"
)

// TestGRPCErrorsAreWhatOTLPExportersRetry checks the one mapping of API errors to gRPC
// codes: backpressure is UNAVAILABLE or RESOURCE_EXHAUSTED with a RetryInfo delay (the
// exporters' retry signal), credentials UNAUTHENTICATED, bad data INVALID_ARGUMENT.
func TestGRPCErrorsAreWhatOTLPExportersRetry(t *testing.T) {
	cases := []struct {
		err   error
		code  codes.Code
		retry time.Duration
	}{
		{pipeline.ErrOverloaded, codes.Unavailable, time.Second},
		{&APIError{Status: 503, Code: "ingest_busy", RetryAfter: 1}, codes.Unavailable, time.Second},
		{&APIError{Status: 429, Code: "too_many", RetryAfter: 7}, codes.ResourceExhausted, 7 * time.Second},
		{errExpired, codes.Unauthenticated, 0},
		{errUnauthenticated, codes.Unauthenticated, 0},
		{ingest.DecodeError(errTestBad), codes.InvalidArgument, 0},
		{forbidden("insert rows"), codes.PermissionDenied, 0},
		{apiErr(404, "database_not_found", "x", ""), codes.NotFound, 0},
	}
	for _, c := range cases {
		st := status.Convert(grpcError(c.err))
		if st.Code() != c.code {
			t.Errorf("%v: %v, want %v", c.err, st.Code(), c.code)
		}
		var got time.Duration
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				got = ri.GetRetryDelay().AsDuration()
			}
		}
		if got != c.retry {
			t.Errorf("%v: retry delay %v, want %v", c.err, got, c.retry)
		}
	}
}

var errTestBad = &testErr{}

type testErr struct{}

func (*testErr) Error() string { return "malformed JSON at byte 3" }

// TestListenerSplitRoutesByFirstBytes: short HTTP/1.x requests reach HTTP without
// waiting for 24 bytes (the preface timeout is an hour here, so a wait would hang the
// test), and the HTTP/2 preface reaches gRPC.
func TestListenerSplitRoutesByFirstBytes(t *testing.T) {
	defer func(d time.Duration) { prefaceTimeout = d }(prefaceTimeout)
	prefaceTimeout = time.Hour
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sl := newSplitListener(ln)
	defer sl.close()
	accept := func(l *subListener, want string) {
		t.Helper()
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got := make([]byte, len(want))
		if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	for _, c := range []struct {
		send string
		to   *subListener
	}{{"GET / HTTP/1.0\r\n\r\n", sl.http}, {"PUT / HTTP/1.0\r\n\r\n", sl.http}, {"PRI", sl.http}, {http2Preface + "frames", sl.grpc}} {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte(c.send)); err != nil {
			t.Fatal(err)
		}
		if c.send == "PRI" {
			// A prefix of the preface, then the end: HTTP answers what it cannot read.
			conn.Close()
		}
		accept(c.to, c.send)
		conn.Close()
	}
}
