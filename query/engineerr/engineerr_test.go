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
