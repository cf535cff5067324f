package edge

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/projections/catalog"
)

// answerProducer acknowledges or fails every produce with err.
type answerProducer struct{ err error }

func (p answerProducer) Produce(context.Context, ...*pipeline.Record) error { return p.err }

// A request's rows go back for another request only when the log acknowledged them: rows
// of a failed accept may still be written later, so their memory must never be reused.
func TestRowsOfAFailedAcceptAreNotRecycled(t *testing.T) {
	p := &Principal{Key: &catalog.APIKey{Permission: "admin"}}
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
		s := &Server{cfg: Config{IngestWait: time.Second, IngestTimeout: time.Second}, inflight: make(chan struct{}, 1),
			deps: Deps{Ingest: pipeline.NewIngestor(answerProducer{c.err}), Query: fakeQuery{}}}
		buf := newRows()
		_, err := s.ingestInto(p, db, table, "", buf, decode)
		if (err == nil) != (c.err == nil) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if kept := buf.B != nil; kept != c.kept {
			t.Errorf("%s: rows kept for recycling %v, want %v", c.name, kept, c.kept)
		}
		recycleRows(buf)
		if len(buf.B) != 0 || buf.Rows != 0 || buf.MaxBytes != 0 {
			t.Errorf("%s: recycled buffer not empty: %d bytes, %d rows, max %d", c.name, len(buf.B), buf.Rows, buf.MaxBytes)
		}
	}
}
