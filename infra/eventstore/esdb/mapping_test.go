package esdb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	esclient "github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-data/svc/projections/es"
)

func TestExpectedRevision(t *testing.T) {
	f := func(in es.Expected, want esclient.ExpectedRevision) {
		t.Helper()
		if got := expectedRevision(in); !reflect.DeepEqual(got, want) {
			t.Errorf("expectedRevision(%s) = %#v, want %#v", in, got, want)
		}
	}
	f(es.Any(), esclient.Any{})
	f(es.NoStream(), esclient.NoStream{})
	f(es.Exact(0), esclient.StreamRevision{Value: 0})
	f(es.Exact(41), esclient.StreamRevision{Value: 41})
	f(es.Exact(math.MaxInt64), esclient.StreamRevision{Value: math.MaxInt64})
}

func TestAllStart(t *testing.T) {
	f := func(after uint64, want esclient.AllPosition, wantOK bool) {
		t.Helper()
		got, ok := allStart(after)
		if ok != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("allStart(%d) = %#v, %v; want %#v, %v", after, got, ok, want, wantOK)
		}
	}
	f(0, esclient.Start{}, true)
	f(1234, esclient.Position{Commit: 1234, Prepare: 1234}, true)
	f(math.MaxInt64, esclient.Position{Commit: math.MaxInt64, Prepare: math.MaxInt64}, true)
	f(math.MaxInt64+1, nil, false)
	f(math.MaxUint64, nil, false) // would be End on the wire
}

func TestAllPosition(t *testing.T) {
	f := func(p esclient.Position, want uint64, wantErr string) {
		t.Helper()
		got, err := allPosition(p)
		if wantErr == "" {
			if err != nil || got != want {
				t.Errorf("allPosition(%+v) = %d, %v; want %d", p, got, err, want)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("allPosition(%+v) error = %v, want one containing %q", p, err, wantErr)
		}
	}
	f(esclient.Position{Commit: 1000, Prepare: 1000}, 1000, "")
	f(esclient.Position{Commit: math.MaxInt64, Prepare: math.MaxInt64}, math.MaxInt64, "")
	f(esclient.Position{Commit: 2000, Prepare: 1500}, 0, "explicit transaction")
	f(esclient.Position{Commit: math.MaxUint64, Prepare: math.MaxUint64}, 0, "no $all position")
}

func TestStreamPosition(t *testing.T) {
	f := func(p esclient.Position, want uint64) {
		t.Helper()
		if got := streamPosition(p); got != want {
			t.Errorf("streamPosition(%+v) = %d, want %d", p, got, want)
		}
	}
	f(esclient.Position{Commit: 5120, Prepare: 5120}, 5120)
	f(esclient.Position{Commit: math.MaxUint64, Prepare: math.MaxUint64}, 0) // server did not say
	f(esclient.Position{Commit: math.MaxUint64, Prepare: 77}, 0)
}

func TestIsSystem(t *testing.T) {
	f := func(stream, typ string, want bool) {
		t.Helper()
		if got := isSystem(stream, typ); got != want {
			t.Errorf("isSystem(%q, %q) = %v, want %v", stream, typ, got, want)
		}
	}
	f("organization-1", "organization.created", false)
	f("$stats-127.0.0.1:2113", "$statsCollected", true)
	f("$$organization-1", "$metadata", true)
	f("$ce-organization", "$>", true)
	f("organization-1", "$streamDeleted", true)
	f("$scavenges", "$scavengeStarted", true)
	f("a$b", "x$y", false)
}

func recorded(stream, typ string, number, pos uint64, data, meta string) *esclient.RecordedEvent {
	return &esclient.RecordedEvent{
		EventID:      uuid.MustParse("00000000-0000-0000-0000-00000000000a"),
		EventType:    typ,
		ContentType:  "application/json",
		StreamID:     stream,
		EventNumber:  number,
		Position:     esclient.Position{Commit: pos, Prepare: pos},
		CreatedDate:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Data:         []byte(data),
		UserMetadata: []byte(meta),
	}
}

func TestFromStreamRead(t *testing.T) {
	got, keep, err := fromStreamRead(&esclient.ResolvedEvent{Event: recorded("s", "x.created", 3, 900, `{"n":1}`, "")})
	want := es.Event{ID: uuid.MustParse("00000000-0000-0000-0000-00000000000a"), Stream: "s", Type: "x.created",
		Data: []byte(`{"n":1}`), Version: 3, Position: 900, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err != nil || !keep || !reflect.DeepEqual(got, want) {
		t.Fatalf("fromStreamRead = %+v, %v, %v\nwant %+v", got, keep, err, want)
	}
	if got.Metadata != nil {
		t.Fatalf("empty metadata read back as %q, want nil", got.Metadata)
	}
}

func TestFromAllRead(t *testing.T) {
	conv := fromAllRead(1000)
	f := func(r *esclient.RecordedEvent, wantKeep bool, wantErr bool) {
		t.Helper()
		got, keep, err := conv(&esclient.ResolvedEvent{Event: r})
		if (err != nil) != wantErr || keep != wantKeep {
			t.Errorf("conv(%s %s @%d) = keep %v, err %v; want keep %v, error %v",
				r.StreamID, r.EventType, r.Position.Commit, keep, err, wantKeep, wantErr)
		}
		if keep && got.Position != r.Position.Commit {
			t.Errorf("position %d, want %d", got.Position, r.Position.Commit)
		}
	}
	f(recorded("s", "x", 0, 999, "{}", ""), false, false)                          // before after
	f(recorded("s", "x", 0, 1000, "{}", ""), false, false)                         // the event at after itself
	f(recorded("s", "x", 1, 1001, "{}", ""), true, false)                          // after after
	f(recorded("$stats-node", "$statsCollected", 5, 2000, "{}", ""), false, false) // system
	f(recorded("s", "$metadata", 5, 2000, "{}", ""), false, false)                 // system type
	tx := recorded("s", "x", 2, 3000, "{}", "")
	tx.Position.Prepare = 2500
	f(tx, false, true) // explicit transaction: fail, never skip silently
}

func TestValidateAppend(t *testing.T) {
	f := func(stream string, events []es.NewEvent, wantErr string) {
		t.Helper()
		err := validateAppend(stream, events)
		if wantErr == "" {
			if err != nil {
				t.Errorf("validateAppend(%q) = %v", stream, err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("validateAppend(%q) = %v, want an error containing %q", stream, err, wantErr)
		}
	}
	ok := es.NewEvent{Type: "x.created", Data: []byte(`{"a":1}`), Metadata: []byte(`{"m":true}`)}
	f("s", []es.NewEvent{ok}, "")
	f("s", []es.NewEvent{{Type: "x.created"}}, "") // no payload at all is fine
	f("", []es.NewEvent{ok}, "empty stream name")
	f("$s", []es.NewEvent{ok}, "system streams")
	f("s", nil, "no events")
	f("s", []es.NewEvent{ok, {Data: []byte(`{}`)}}, "event 1 without a type")
	f("s", []es.NewEvent{{Type: "$metadata", Data: []byte(`{}`)}}, "system types")
	f("s", []es.NewEvent{{Type: "x", Data: []byte(`{"a":`)}}, "data is not JSON")
	f("s", []es.NewEvent{{Type: "x", Data: []byte(`{}`), Metadata: []byte(`nope`)}}, "metadata is not JSON")
}

func TestClassify(t *testing.T) {
	f := func(err error, want failure) {
		t.Helper()
		if got := classify(err); got != want {
			t.Errorf("classify(%v) = %d, want %d", err, got, want)
		}
	}
	f(errors.New("boom"), failPermanent)
	f(status.Error(codes.Unavailable, "connection refused"), failRetryable)
	f(status.Error(codes.DeadlineExceeded, "slow"), failRetryable)
	f(status.Error(codes.Unauthenticated, "bad password"), failAuth)
	f(status.Error(codes.PermissionDenied, "acl"), failAuth)
	f(status.Error(codes.Internal, "bug"), failPermanent)
	// The client's catch-all code falls through to the gRPC status it wraps, through any
	// wrapping of ours or the client's.
	wrapped, _ := esclient.FromError(status.Error(codes.Unavailable, "down"))
	f(wrapped, failRetryable)
	f(fmt.Errorf("could not construct append operation. Reason: %w", wrapped), failRetryable)
	plain, _ := esclient.FromError(errors.New("odd"))
	f(plain, failPermanent)
}

func TestCodeFailure(t *testing.T) {
	f := func(c esclient.ErrorCode, want failure, wantSpecific bool) {
		t.Helper()
		got, specific := codeFailure(c)
		if got != want || specific != wantSpecific {
			t.Errorf("codeFailure(%d) = %d, %v; want %d, %v", c, got, specific, want, wantSpecific)
		}
	}
	f(esclient.ErrorCodeWrongExpectedVersion, failConcurrency, true)
	f(esclient.ErrorCodeResourceNotFound, failNotFound, true)
	f(esclient.ErrorCodeStreamDeleted, failDeleted, true)
	f(esclient.ErrorCodeUnauthenticated, failAuth, true)
	f(esclient.ErrorCodeAccessDenied, failAuth, true)
	f(esclient.ErrorUnavailable, failRetryable, true)
	f(esclient.ErrorCodeDeadlineExceeded, failRetryable, true)
	f(esclient.ErrorCodeNotLeader, failRetryable, true)
	f(esclient.ErrorAborted, failRetryable, true)
	f(esclient.ErrorCodeConnectionClosed, failRetryable, true)
	f(esclient.ErrorCodeInternalServer, failPermanent, true)
	f(esclient.ErrorCodeParsing, failPermanent, true)
	f(esclient.ErrorCodeUnknown, failPermanent, false)
}

func TestConcurrencyError(t *testing.T) {
	f := func(expected es.Expected, clientMsg, want string) {
		t.Helper()
		err := concurrencyError("org-1", expected, errors.New(clientMsg))
		if !errors.Is(err, es.ErrConcurrency) {
			t.Errorf("%v does not wrap es.ErrConcurrency", err)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not contain %q", err, want)
		}
	}
	// The client's text, as built by AppendToStream in v4.2.0.
	msg := "[ErrorCodeWrongExpectedVersion] an append request failed the optimistic concurrency on the server: " +
		"wrong expected version: expecting '%s' but got '%s'"
	f(es.Exact(1), fmt.Sprintf(msg, "1", "0"), "stream org-1 at version 0, expected version 1")
	f(es.Exact(0), fmt.Sprintf(msg, "0", "no_stream"), "stream org-1 does not exist, expected version 0")
	f(es.NoStream(), fmt.Sprintf(msg, "no_stream", "3"), "stream org-1 at version 3, expected no stream")
	f(es.Exact(2), "something else entirely", "append to org-1 expecting version 2: something else entirely")
}

func TestDescribe(t *testing.T) {
	ctx := context.Background()
	f := func(ctx context.Context, err error, wantIs error, wantText string) {
		t.Helper()
		got := describe(ctx, "append to s", "esdb://h:2113", err)
		if wantIs != nil && !errors.Is(got, wantIs) {
			t.Errorf("describe(%v) = %v, want it to wrap %v", err, got, wantIs)
		}
		if !strings.Contains(got.Error(), wantText) {
			t.Errorf("describe(%v) = %q, want it to contain %q", err, got, wantText)
		}
	}
	down := status.Error(codes.Unavailable, "connection refused")
	f(ctx, down, down, "EventStoreDB at esdb://h:2113 is unavailable")
	f(ctx, down, es.ErrUnavailable, "retry later")
	f(ctx, status.Error(codes.Unauthenticated, "x"), nil, "member of $admins")
	f(ctx, errors.New("boom"), nil, "append to s: boom")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	f(canceled, down, context.Canceled, "append to s: context canceled")
	closed, cancelCause := context.WithCancelCause(ctx)
	cancelCause(es.ErrClosed)
	f(closed, errors.New("rpc error: code = Canceled"), es.ErrClosed, "store is closed")
}

func TestNormalizeScheme(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := normalizeScheme(in); got != want {
			t.Errorf("normalizeScheme(%q) = %q, want %q", in, got, want)
		}
	}
	f("esdb://localhost:2113?tls=false", "esdb://localhost:2113?tls=false")
	f("esdb+discover://h:2113", "esdb+discover://h:2113")
	f("kurrentdb://localhost:2113?tls=false", "esdb://localhost:2113?tls=false")
	f("KurrentDB+Discover://u:p@h:2113", "esdb+discover://u:p@h:2113")
	f("kurrent://h:2113", "esdb://h:2113")
	f("kdb+discover://h:2113", "esdb+discover://h:2113")
	f("http://h:2113", "http://h:2113") // left for the client to refuse
	f("localhost:2113", "localhost:2113")
}

func TestRedact(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	f("esdb://localhost:2113?tls=false", "esdb://localhost:2113?tls=false")
	f("esdb://admin:changeit@localhost:2113?tls=false", "esdb://admin:xxxxx@localhost:2113?tls=false")
	f("esdb+discover://ops:p@ss@cluster.example:2113", "esdb+discover://ops:xxxxx@cluster.example:2113")
	f("esdb://admin:changeit@h1:2113,h2:2113,h3:2113?tls=true", "esdb://admin:xxxxx@h1:2113,h2:2113,h3:2113?tls=true")
	f("esdb://h:2113?tlsCaFile=/a@b/ca.pem", "esdb://h:2113?tlsCaFile=/a@b/ca.pem") // @ after the host is not userinfo
	f("esdb://admin@h:2113", "esdb://admin@h:2113")
	f("not a url", "not a url")
}

func TestOlder(t *testing.T) {
	f := func(major, minor int, want bool) {
		t.Helper()
		if got := older(esclient.ServerVersion{Major: major, Minor: minor}); got != want {
			t.Errorf("older(%d.%d) = %v, want %v", major, minor, got, want)
		}
	}
	f(21, 10, true)
	f(22, 6, true)
	f(22, 10, false)
	f(23, 10, false)
	f(24, 10, false)
	f(25, 0, false)
}
