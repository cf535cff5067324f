package ingest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/edge/apierr"
	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/projections/catalog"
)

// answerProducer acknowledges or fails every produce with err.
type answerProducer struct{ err error }

func (p answerProducer) Produce(context.Context, ...*pipeline.Record) error { return p.err }

// admin is a caller with the admin permission.
type admin struct{}

func (admin) Org() uuid.UUID     { return uuid.UUID{} }
func (admin) Cluster() uuid.UUID { return uuid.UUID{} }
func (admin) CanInsert() bool    { return true }
func (admin) CustomRole() bool   { return false }

// grantAll is an Auth whose callers hold every INSERT grant; the tests here call
// IngestInto, which asks it only MayInsert.
type grantAll struct{ Auth }

func (grantAll) MayInsert(Caller, string, string) bool { return true }

// A request's rows go back for another request only when the log acknowledged them: rows
// of a failed accept may still be written later, so their memory must never be reused.
func TestRowsOfAFailedAcceptAreNotRecycled(t *testing.T) {
	p := admin{}
	db := &catalog.Database{Name: "default"}
	table := &catalog.Table{Name: "t", Engine: "e"}
	decode := func(b *rows.Buffer) error { return rows.DecodeJSON([]byte(`{"a":1}`), b) }
	for _, c := range []struct {
		name string
		err  error
		kept bool
	}{
		{"acknowledged", nil, true},
		{"not acknowledged", errors.New("the log did not acknowledge in time"), false},
	} {
		s := New(context.Background(), Config{MaxConcurrentIngest: 1, IngestWait: time.Second, IngestTimeout: time.Second},
			Deps{Auth: grantAll{}, Ingest: pipeline.NewIngestor(answerProducer{c.err})})
		buf := NewRows()
		_, err := s.IngestInto(p, db, table, "", buf, decode)
		if (err == nil) != (c.err == nil) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if kept := buf.B != nil; kept != c.kept {
			t.Errorf("%s: rows kept for recycling %v, want %v", c.name, kept, c.kept)
		}
		RecycleRows(buf)
		if len(buf.B) != 0 || buf.Rows != 0 || buf.MaxBytes != 0 {
			t.Errorf("%s: recycled buffer not empty: %d bytes, %d rows, max %d", c.name, len(buf.B), buf.Rows, buf.MaxBytes)
		}
	}
}

// The ingest slot bounds the work of inserts in flight, decoding included: with every
// slot taken, a request is refused with 503 before its body is decoded (issue 24: the
// slot used to be taken only around the log's acknowledgment, after decoding).
func TestIngestSlotIsTakenBeforeDecoding(t *testing.T) {
	p := admin{}
	db := &catalog.Database{Name: "default"}
	table := &catalog.Table{Name: "t", Engine: "e"}
	s := New(context.Background(), Config{MaxConcurrentIngest: 1, IngestWait: time.Millisecond, IngestTimeout: time.Second},
		Deps{Auth: grantAll{}, Ingest: pipeline.NewIngestor(answerProducer{})})
	s.inflight <- struct{}{} // every slot is taken
	decoded := false
	decode := func(b *rows.Buffer) error {
		decoded = true
		return rows.DecodeJSON([]byte(`{"a":1}`), b)
	}
	buf := NewRows()
	defer RecycleRows(buf)
	_, err := s.IngestInto(p, db, table, "", buf, decode)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status != 503 || ae.Code != "ingest_busy" {
		t.Fatalf("with every slot taken: %v, want 503 ingest_busy", err)
	}
	if decoded {
		t.Error("the body was decoded before the ingest slot was taken")
	}
	<-s.inflight // the slot is free: the same request decodes and lands
	if n, err := s.IngestInto(p, db, table, "", buf, decode); err != nil || n != 1 || !decoded {
		t.Fatalf("with a free slot: %d rows, %v, decoded %v", n, err, decoded)
	}
	if len(s.inflight) != 0 {
		t.Error("the slot was not given back")
	}
}
