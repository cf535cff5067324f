package tables_test

import (
	"context"
	"errors"
	"testing"

	"github.com/svc-data/svc/query/engineerr"
	"github.com/svc-data/svc/query/tables"
)

// failingEngine answers each Exec with the next of its errors, then nil.
type failingEngine struct {
	errs  []error
	execs []string
}

func (e *failingEngine) Exec(_ context.Context, sql string) error {
	e.execs = append(e.execs, sql)
	if len(e.execs) <= len(e.errs) {
		return e.errs[len(e.execs)-1]
	}
	return nil
}

func (e *failingEngine) QueryStrings(context.Context, string) ([]string, error) { return nil, nil }

// TestDropEngineDatabaseRetries: a drop the engine refuses because a table appeared in
// the database meanwhile (a consumer creating a generation; DATABASE_NOT_EMPTY, which
// says "try again") is tried again until it succeeds; a fatal error is not retried, and
// the tries are bounded.
func TestDropEngineDatabaseRetries(t *testing.T) {
	notEmpty := &engineerr.Error{Code: 219, Message: "New table appeared in database being dropped or detached. Try again.", Class: engineerr.Retryable}
	e := &failingEngine{errs: []error{notEmpty, notEmpty}}
	if err := tables.DropEngineDatabase(context.Background(), e, "org_db"); err != nil || len(e.execs) != 3 {
		t.Fatalf("two refusals then success: %v after %d tries", err, len(e.execs))
	}
	if e.execs[0] != "DROP DATABASE IF EXISTS `org_db` SYNC" {
		t.Fatalf("statement: %s", e.execs[0])
	}
	fatal := &engineerr.Error{Code: 62, Message: "syntax error", Class: engineerr.Fatal}
	e = &failingEngine{errs: []error{fatal}}
	if err := tables.DropEngineDatabase(context.Background(), e, "org_db"); !errors.Is(err, fatal) || len(e.execs) != 1 {
		t.Fatalf("fatal: %v after %d tries", err, len(e.execs))
	}
	e = &failingEngine{errs: []error{notEmpty, notEmpty, notEmpty, notEmpty, notEmpty, notEmpty, notEmpty}}
	if err := tables.DropEngineDatabase(context.Background(), e, "org_db"); !errors.Is(err, notEmpty) || len(e.execs) != 6 {
		t.Fatalf("always refused: %v after %d tries", err, len(e.execs))
	}
}
