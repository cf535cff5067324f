// Package engineerr is the domain's view of a SQL engine's error: its code and text,
// and what retrying can do about it. Engine adapters (infra/clickhouse/chclient)
// classify the driver's errors once, where they happen, into an *Error; the domain
// branches on the class and never on a driver's types.
package engineerr

import (
	"errors"
	"fmt"
)

// Class is what a caller can do about an engine error. A class is itself an error, so
// callers branch on Permanent and Fatal with errors.Is: an *Error is its class, and code
// that refuses a statement or rows for the engine's reasons without the engine (a
// pipeline step that cannot run) wraps the class. ClassOf also answers Retryable.
type Class uint8

const (
	// Retryable: the engine could not answer now (down, restarting, overloaded, out of
	// memory); the same statement may succeed later, after a backoff.
	Retryable Class = iota
	// Permanent: the data itself is refused (a row that does not parse or convert);
	// retrying the same rows can never succeed, so they go to dead letters.
	Permanent
	// Fatal: the statement cannot succeed as written whatever the data (an object it
	// names is gone, the statement or a setting is invalid). Retrying it blindly stalls
	// its caller: a consumer re-plans from its committed state instead.
	Fatal
)

func (c Class) String() string {
	switch c {
	case Permanent:
		return "permanent"
	case Fatal:
		return "fatal"
	default:
		return "retryable"
	}
}

// Error is how a class reads in an error's text (a dead letter's reason, a log).
func (c Class) Error() string {
	switch c {
	case Permanent:
		return "rows rejected by the engine"
	case Fatal:
		return "statement refused by the engine"
	default:
		return "engine unavailable"
	}
}

// Error is an error the engine reported for a statement.
type Error struct {
	Code    int32  // the engine's error code
	Message string // the engine's text, engine names untranslated
	Class   Class
	// Err is the driver's error, for logs; callers never inspect it.
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("code: %d, message: %s", e.Code, e.Message) }

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is e's class: errors.Is(err, engineerr.Fatal).
func (e *Error) Is(target error) bool {
	c, ok := target.(Class)
	return ok && c == e.Class
}

// As returns the engine error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ClassOf is the class of err: an engine error's own, or a class err wraps, Retryable for
// anything else (connections refused or cut, timeouts), since those are the engine being
// away.
func ClassOf(err error) Class {
	if e, ok := As(err); ok {
		return e.Class
	}
	var c Class
	if errors.As(err, &c) {
		return c
	}
	return Retryable
}
