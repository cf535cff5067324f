package edge

import (
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
		{decodeError(errTestBad), codes.InvalidArgument, 0},
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
