package esdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	esclient "github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/svc-data/svc/projections/es"
)

// This file holds the pure translations between the port and the client: expected
// versions, positions, events and errors. None of it needs a server, so all of it is unit
// tested.

// expectedRevision maps the port's expectation to the client's.
func expectedRevision(e es.Expected) esclient.ExpectedRevision {
	if v, ok := e.Version(); ok {
		return esclient.StreamRevision{Value: v}
	}
	if e.IsNoStream() {
		return esclient.NoStream{}
	}
	return esclient.Any{}
}

// allStart returns where a forward read of $all must start so that it returns the events
// after position after, and false when no event can come after it.
//
// Positions are $all commit positions. For every event written through gRPC the server
// reports commit == prepare == the event's own log position (each append is an implicit
// transaction of self-committed prepares), so the pair (after, after) is exactly the
// position of the event the caller saw last. A forward read from a position is inclusive
// (the server returns records at or after it), so the event at after comes back first and
// the iterator drops it, along with anything else at or before after.
func allStart(after uint64) (esclient.AllPosition, bool) {
	if after == 0 {
		return esclient.Start{}, true
	}
	if after > math.MaxInt64 {
		// The server's positions are int64; (MaxUint64, MaxUint64) would even mean End.
		return nil, false
	}
	return esclient.Position{Commit: after, Prepare: after}, true
}

// errTransactionEvent is returned for an event written in an explicit transaction (the
// legacy TCP API): its commit and prepare positions differ and it shares its commit
// position with the other events of the transaction, so it has no position of its own
// that the port could order by.
var errTransactionEvent = errors.New("event was written in an explicit transaction, which the es port cannot order")

// allPosition returns the port position of an event read from $all.
func allPosition(p esclient.Position) (uint64, error) {
	if p.Commit > math.MaxInt64 {
		return 0, fmt.Errorf("event has no $all position (commit %d)", p.Commit)
	}
	if p.Commit != p.Prepare {
		return 0, fmt.Errorf("%w (commit %d, prepare %d)", errTransactionEvent, p.Commit, p.Prepare)
	}
	return p.Commit, nil
}

// streamPosition returns the port position of an event read from its stream, or 0 when
// the server did not say. Servers since 2022 (22.x) fill in the $all position of
// self-committed events on stream reads; older ones, and events of explicit
// transactions, carry -1, which the client surfaces as MaxUint64.
func streamPosition(p esclient.Position) uint64 {
	if p.Commit > math.MaxInt64 {
		return 0
	}
	return p.Commit
}

// isSystem reports whether an event belongs to EventStoreDB rather than to us: system
// streams ($stats-..., $$metadata streams, projection outputs such as $ce-...) and system
// event types ($metadata, $>, $streamDeleted, ...). ReadAll skips them.
func isSystem(stream, typ string) bool {
	return strings.HasPrefix(stream, "$") || strings.HasPrefix(typ, "$")
}

// toEvent maps a recorded event with the position the caller worked out.
func toEvent(r *esclient.RecordedEvent, pos uint64) es.Event {
	return es.Event{
		ID:       r.EventID,
		Stream:   r.StreamID,
		Type:     r.EventType,
		Data:     nilIfEmpty(r.Data),
		Metadata: nilIfEmpty(r.UserMetadata),
		Version:  r.EventNumber,
		Position: pos,
		Time:     r.CreatedDate,
	}
}

// nilIfEmpty makes an absent payload read back as nil, as it does from the embedded store;
// the server always sends a (possibly empty) byte string.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// fromStreamRead maps an event read from a single stream.
func fromStreamRead(re *esclient.ResolvedEvent) (es.Event, bool, error) {
	r := re.OriginalEvent()
	if r == nil {
		return es.Event{}, false, nil
	}
	return toEvent(r, streamPosition(r.Position)), true, nil
}

// fromAllRead returns the mapping of events read from $all after position after: system
// events and events at or before after are skipped.
func fromAllRead(after uint64) func(*esclient.ResolvedEvent) (es.Event, bool, error) {
	return func(re *esclient.ResolvedEvent) (es.Event, bool, error) {
		r := re.OriginalEvent()
		if r == nil || isSystem(r.StreamID, r.EventType) {
			return es.Event{}, false, nil
		}
		pos, err := allPosition(r.Position)
		if err != nil {
			return es.Event{}, false, fmt.Errorf("event %d of stream %s: %w", r.EventNumber, r.StreamID, err)
		}
		if pos <= after {
			return es.Event{}, false, nil
		}
		return toEvent(r, pos), true, nil
	}
}

// validateAppend checks what the server would accept but the port must not: names that
// ReadAll would hide, and payloads that are not JSON (the embedded store rejects those too).
func validateAppend(stream string, events []es.NewEvent) error {
	if stream == "" {
		return errors.New("append: empty stream name")
	}
	if strings.HasPrefix(stream, "$") {
		return fmt.Errorf("append to %s: stream names starting with $ are EventStoreDB system streams", stream)
	}
	if len(events) == 0 {
		return fmt.Errorf("append to %s: no events", stream)
	}
	for i, e := range events {
		switch {
		case e.Type == "":
			return fmt.Errorf("append to %s: event %d without a type", stream, i)
		case strings.HasPrefix(e.Type, "$"):
			return fmt.Errorf("append to %s: event type %s: types starting with $ are EventStoreDB system types", stream, e.Type)
		case len(e.Data) > 0 && !json.Valid(e.Data):
			return fmt.Errorf("append to %s: %s event data is not JSON", stream, e.Type)
		case len(e.Metadata) > 0 && !json.Valid(e.Metadata):
			return fmt.Errorf("append to %s: %s event metadata is not JSON", stream, e.Type)
		}
	}
	return nil
}

// failure is how a caller should react to an error from the server.
type failure int

const (
	// failPermanent: retrying the same call will not help (bad request, deleted stream,
	// unexpected server or client error).
	failPermanent failure = iota
	// failRetryable: the server is down, unreachable, not the leader or slow; retry later.
	failRetryable
	// failConcurrency: the stream was not at the expected version.
	failConcurrency
	// failNotFound: the stream does not exist (reads only).
	failNotFound
	// failAuth: wrong credentials or missing permissions; an operator must fix the
	// connection string or the ACLs.
	failAuth
	// failDeleted: the stream was deleted (tombstoned) in EventStoreDB.
	failDeleted
)

// classify tells what kind of failure err is. The client's own code decides when it is
// specific; errors it leaves unclassified (and raw gRPC errors some calls return
// unwrapped) fall back to the gRPC status code underneath.
func classify(err error) failure {
	var ce *esclient.Error
	if errors.As(err, &ce) {
		if f, ok := codeFailure(ce.Code()); ok {
			return f
		}
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.ResourceExhausted:
		return failRetryable
	case codes.Unauthenticated, codes.PermissionDenied:
		return failAuth
	case codes.NotFound:
		return failNotFound
	}
	return failPermanent
}

// codeFailure maps the client's error codes; false means the code says nothing useful.
func codeFailure(c esclient.ErrorCode) (failure, bool) {
	switch c {
	case esclient.ErrorCodeWrongExpectedVersion:
		return failConcurrency, true
	case esclient.ErrorCodeResourceNotFound:
		return failNotFound, true
	case esclient.ErrorCodeStreamDeleted:
		return failDeleted, true
	case esclient.ErrorCodeUnauthenticated, esclient.ErrorCodeAccessDenied:
		return failAuth, true
	case esclient.ErrorUnavailable, esclient.ErrorCodeDeadlineExceeded, esclient.ErrorCodeNotLeader,
		esclient.ErrorAborted, esclient.ErrorCodeConnectionClosed:
		return failRetryable, true
	case esclient.ErrorCodeUnknown:
		return failPermanent, false
	}
	return failPermanent, true
}

// isConnectionClosed reports the error the client returns, before sending anything, once
// it has given up on its connection for good (see Store.replace).
func isConnectionClosed(err error) bool {
	var ce *esclient.Error
	return errors.As(err, &ce) && ce.Code() == esclient.ErrorCodeConnectionClosed
}

// describe wraps err from the failing step, naming the remedy where there is one.
// Cancellation is reported as the context's cause, so that errors.Is(err,
// context.Canceled) (or es.ErrClosed once the store is closed) holds.
func describe(ctx context.Context, step, addr string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", step, context.Cause(ctx))
	}
	switch classify(err) {
	case failRetryable:
		return fmt.Errorf("%s: EventStoreDB at %s is unavailable (check that it is running and reachable; retry later): %w (%w)", step, addr, err, es.ErrUnavailable)
	case failAuth:
		return fmt.Errorf("%s: EventStoreDB at %s refused the request: the connection string needs a user who may read $all and write streams, for example a member of $admins: %w", step, addr, err)
	case failDeleted:
		return fmt.Errorf("%s: the stream was deleted in EventStoreDB, which the control plane never does; restore it from a backup: %w", step, err)
	}
	return fmt.Errorf("%s: %w", step, err)
}

// wrongVersion matches the message of the client's wrong-expected-version error, e.g.
// "wrong expected version: expecting '1' but got '0'" or "... but got 'no_stream'".
var wrongVersion = regexp.MustCompile(`expecting '([^']*)' but got '([^']*)'`)

// concurrencyError turns the client's wrong-expected-version error into es.ErrConcurrency
// with the stream's actual version in the message.
func concurrencyError(stream string, expected es.Expected, err error) error {
	m := wrongVersion.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("%w: append to %s expecting %s: %v", es.ErrConcurrency, stream, expected, err)
	}
	actual := "at version " + m[2]
	if m[2] == "no_stream" {
		actual = "does not exist"
	}
	return fmt.Errorf("%w: stream %s %s, expected %s", es.ErrConcurrency, stream, actual, expected)
}

// kurrentSchemes are the schemes KurrentDB's documentation and newer clients use for the
// same connection strings; client v4.2.0 knows only esdb:// and esdb+discover://.
var kurrentSchemes = []string{"kurrentdb", "kurrent", "kdb"}

// normalizeScheme rewrites kurrentdb://, kurrent:// and kdb:// (and their +discover
// forms) to esdb://, so that operators can paste either spelling.
func normalizeScheme(cs string) string {
	scheme, rest, ok := strings.Cut(cs, "://")
	if !ok {
		return cs
	}
	name, discover := strings.CutSuffix(strings.ToLower(scheme), "+discover")
	for _, k := range kurrentSchemes {
		if name == k {
			if discover {
				return "esdb+discover://" + rest
			}
			return "esdb://" + rest
		}
	}
	return cs
}

// minMajor and minMinor name the oldest EventStoreDB release Open accepts (22.10): the
// first LTS whose stream reads carry $all positions.
const minMajor, minMinor = 22, 10

// older reports whether v is older than the oldest supported release.
func older(v esclient.ServerVersion) bool {
	return v.Major < minMajor || v.Major == minMajor && v.Minor < minMinor
}

// redact hides the password of a connection string so that it can appear in messages
// and logs: esdb://user:secret@host:2113 becomes esdb://user:xxxxx@host:2113. It works
// on the text because cluster strings (esdb://h1:2113,h2:2113) are not valid URLs.
func redact(cs string) string {
	scheme := strings.Index(cs, "://")
	if scheme < 0 {
		return cs
	}
	rest := cs[scheme+3:]
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return cs
	}
	user := rest[:at]
	if colon := strings.Index(user, ":"); colon >= 0 {
		user = user[:colon] + ":xxxxx"
	}
	return cs[:scheme+3] + user + rest[at:]
}
