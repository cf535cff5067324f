// Package engineerr is the domain's view of a SQL engine's error: its code and text,
// and what retrying can do about it. Engine adapters (infra/clickhouse/chclient)
// classify the driver's errors once, where they happen, into an *Error; the domain
// branches on the class and never on a driver's types.
package engineerr

import (
	"errors"
	"fmt"
)

// Class is what a caller can do about an engine error.
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

// EngineCode is the engine's error code, for callers that may not import this package
// (the pipeline reports it for a stalled partition).
func (e *Error) EngineCode() int32 { return e.Code }

// As returns the engine error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ClassOf is the class of err: an engine error's own, Retryable for anything else
// (connections refused or cut, timeouts), since those are the engine being away.
func ClassOf(err error) Class {
	if e, ok := As(err); ok {
		return e.Class
	}
	return Retryable
}
