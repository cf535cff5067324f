package chclient

import (
	"fmt"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/svc-data/svc/query/engineerr"
)

// TestClassifyNamesKinds: the classifier is the one place raw engine codes are read; the
// domain asks engineerr's predicates. Codes the engine shares with other errors (libchdb's
// UNKNOWN_EXCEPTION) name a kind only with the text that tells them apart.
func TestClassifyNamesKinds(t *testing.T) {
	f := func(code int32, msg string, pred func(error) bool, want bool) {
		t.Helper()
		err := Classify(fmt.Errorf("stream: %w", &clickhouse.Exception{Code: code, Message: msg}))
		if pred(err) != want {
			t.Errorf("code %d %q: predicate %v, want %v", code, msg, !want, want)
		}
	}
	f(60, "Table d.t does not exist", engineerr.IsUnknownTable, true)
	f(81, "Database nowhere does not exist", engineerr.IsUnknownDatabase, true)
	f(81, "Database nowhere does not exist", engineerr.IsUnknownTable, false)
	for _, c := range []int32{43, 53, 70, 386} {
		f(c, "Illegal type", engineerr.IsWrongType, true)
	}
	f(44, "Illegal column", engineerr.IsWrongType, false)
	for _, c := range []int32{43, 44, 48, 53, 169, 386} {
		f(c, "Illegal type Dynamic", engineerr.IsTypeRefused, true)
	}
	f(70, "Cannot convert", engineerr.IsTypeRefused, false)
	f(1002, "No active streaming query", engineerr.IsNoActiveStream, true)
	f(1002, "std::bad_alloc", engineerr.IsNoActiveStream, false)
	f(62, "No active streaming query", engineerr.IsNoActiveStream, false)
	if engineerr.IsUnknownTable(fmt.Errorf("connection refused")) {
		t.Error("an error that is not the engine's answer has no kind")
	}
}
