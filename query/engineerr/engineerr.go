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

// Kind is what an engine error says where a caller branches on more than its class; an
// error may be of several kinds (Kind is a set). The engine adapter's classifier sets
// them from the engine's code, the one place raw codes are read; callers ask the
// predicates below (IsUnknownTable, ...).
type Kind uint16

const (
	// UnknownTable: a table the statement names does not exist (UNKNOWN_TABLE).
	UnknownTable Kind = 1 << iota
	// UnknownDatabase: a database the statement names does not exist (UNKNOWN_DATABASE).
	UnknownDatabase
	// WrongType: a function or conversion got a value of a type it does not take
	// (ILLEGAL_TYPE_OF_ARGUMENT, TYPE_MISMATCH, CANNOT_CONVERT_TYPE, NO_COMMON_TYPE),
	// which another type of the same value may cure.
	WrongType
	// TypeRefused: the statement uses a value where its type cannot go
	// (ILLEGAL_TYPE_OF_ARGUMENT, ILLEGAL_COLUMN, TYPE_MISMATCH, NO_COMMON_TYPE,
	// NOT_IMPLEMENTED, BAD_TYPE_OF_FIELD): what a Dynamic path in the wrong place causes.
	TypeRefused
	// NoActiveStream: the embedded engine has no stream for a result without rows in a
	// format with a header; the statement can run row by row instead.
	NoActiveStream
	// UnknownIdentifier: a column or alias the statement names does not exist
	// (UNKNOWN_IDENTIFIER).
	UnknownIdentifier
)

// Error is an error the engine reported for a statement.
type Error struct {
	Code    int32  // the engine's error code, for answers and logs; branch on Class and Kind
	Message string // the engine's text, engine names untranslated
	Class   Class
	Kinds   Kind // the kinds it is, a set
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

// is reports whether the engine error in err's chain is of kind k.
func is(err error, k Kind) bool {
	e, ok := As(err)
	return ok && e.Kinds&k != 0
}

// IsUnknownTable reports whether the engine said a table err's statement names does not
// exist.
func IsUnknownTable(err error) bool { return is(err, UnknownTable) }

// IsUnknownDatabase reports whether the engine said a database err's statement names does
// not exist.
func IsUnknownDatabase(err error) bool { return is(err, UnknownDatabase) }

// IsWrongType reports whether the engine refused a value for its type, which a value of
// another type may cure.
func IsWrongType(err error) bool { return is(err, WrongType) }

// IsTypeRefused reports whether the engine refused a value where the statement uses it
// for its type (a Dynamic path in the wrong place, say).
func IsTypeRefused(err error) bool { return is(err, TypeRefused) }

// IsUnknownIdentifier reports whether the engine said a column or alias err's statement
// names does not exist.
func IsUnknownIdentifier(err error) bool { return is(err, UnknownIdentifier) }

// IsNoActiveStream reports whether the engine had no stream for a result without rows
// (run the statement row by row instead).
func IsNoActiveStream(err error) bool { return is(err, NoActiveStream) }

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
