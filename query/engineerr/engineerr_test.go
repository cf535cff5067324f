package engineerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestClassOfFollowsTheChain(t *testing.T) {
	f := func(err error, want Class) {
		t.Helper()
		if got := ClassOf(err); got != want {
			t.Errorf("ClassOf(%v) = %s, want %s", err, got, want)
		}
	}
	f(errors.New("connection refused"), Retryable)
	f(&Error{Code: 6, Class: Permanent}, Permanent)
	f(fmt.Errorf("insert batch: %w", &Error{Code: 60, Class: Fatal}), Fatal)
	f(fmt.Errorf("a: %w", fmt.Errorf("b: %w", &Error{Code: 241})), Retryable)
	if e, ok := As(fmt.Errorf("x: %w", &Error{Code: 62, Message: "Syntax error"})); !ok || e.Code != 62 || e.Error() != "code: 62, message: Syntax error" {
		t.Errorf("As: %v %v", e, ok)
	}
}

// The pipeline branches on classes with errors.Is, whether the class comes from an
// engine error in the chain or is wrapped by code that refuses on the engine's behalf.
func TestErrorsIsMatchesTheClass(t *testing.T) {
	f := func(err error, target Class, want bool) {
		t.Helper()
		if got := errors.Is(err, target); got != want {
			t.Errorf("errors.Is(%v, %s) = %v, want %v", err, target, got, want)
		}
	}
	f(fmt.Errorf("insert: %w", &Error{Code: 6, Class: Permanent}), Permanent, true)
	f(fmt.Errorf("insert: %w", &Error{Code: 6, Class: Permanent}), Fatal, false)
	f(fmt.Errorf("insert: %w", &Error{Code: 60, Class: Fatal}), Fatal, true)
	f(fmt.Errorf("%w: this node cannot insert", Fatal), Fatal, true)
	f(fmt.Errorf("%w: this node cannot insert", Fatal), Permanent, false)
	f(errors.New("connection refused"), Permanent, false)
	f(errors.New("connection refused"), Fatal, false)
	if got := ClassOf(fmt.Errorf("create generation 1: %w", Permanent)); got != Permanent {
		t.Errorf("ClassOf of a wrapped class = %s", got)
	}
	if got := fmt.Errorf("%w: %w", Permanent, &Error{Code: 6, Message: "Cannot parse"}).Error(); got != "rows rejected by the engine: code: 6, message: Cannot parse" {
		t.Errorf("text: %q", got)
	}
}
