package statement

import (
	"fmt"
	"strings"
)

// Error is a refusal of a statement: what the HTTP layer answers with
// {"error": {"code", "message", "hint"}} and Status.
type Error struct {
	Status  int    // 400, 403, 404 or 409
	Code    string // snake_case, stable
	Message string // what is wrong, in logical names
	Hint    string // what to write instead; may be empty
	Pos     int    // byte offset into the statement text, or -1 when not tied to a place
}

func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Code + ": " + e.Message
	}
	return e.Code + ": " + e.Message + " (hint: " + e.Hint + ")"
}

// Caret renders the line of sql that holds e.Pos with a caret under the
// offending byte, for error displays and golden files. It returns "" when the
// error has no position.
func (e *Error) Caret(sql string) string {
	if e.Pos < 0 || e.Pos > len(sql) {
		return ""
	}
	start := strings.LastIndexByte(sql[:e.Pos], '\n') + 1
	end := strings.IndexByte(sql[e.Pos:], '\n')
	if end < 0 {
		end = len(sql)
	} else {
		end += e.Pos
	}
	col := 0
	for range sql[start:e.Pos] { // count runes, not bytes
		col++
	}
	return sql[start:end] + "\n" + strings.Repeat(" ", col) + "^"
}

// Status codes used by Error.
const (
	statusBadRequest = 400
	statusForbidden  = 403
	statusNotFound   = 404
	statusConflict   = 409
)

func newError(status int, code string, pos int, hint string, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...), Hint: hint, Pos: pos}
}

// badRequest is the common 400.
func badRequest(code string, pos int, hint string, format string, args ...any) *Error {
	return newError(statusBadRequest, code, pos, hint, format, args...)
}

func forbidden(code string, pos int, hint string, format string, args ...any) *Error {
	return newError(statusForbidden, code, pos, hint, format, args...)
}

func notFound(code string, pos int, hint string, format string, args ...any) *Error {
	return newError(statusNotFound, code, pos, hint, format, args...)
}

func conflict(code string, pos int, hint string, format string, args ...any) *Error {
	return newError(statusConflict, code, pos, hint, format, args...)
}

// Error codes. Every refusal uses one of these; the HTTP layer passes them
// through unchanged.
const (
	CodeSyntax               = "syntax_error"
	CodeUnsupportedStatement = "unsupported_statement"
	CodeUnsupportedSyntax    = "unsupported_syntax"
	CodeMultipleStatements   = "multiple_statements"
	CodeEmptyStatement       = "empty_statement"
	CodeForbidden            = "forbidden"
	CodeUnknownDatabase      = "unknown_database"
	CodeUnknownTable         = "unknown_table"
	CodeUnknownRole          = "unknown_role"
	CodeUnknownRowPolicy     = "unknown_row_policy"
	CodeUnknownProfile       = "unknown_settings_profile"
	CodeTableExists          = "table_exists"
	CodeRoleExists           = "role_exists"
	CodeRowPolicyExists      = "row_policy_exists"
	CodeProfileExists        = "settings_profile_exists"
	CodeNoGeneration         = "table_not_ready"
	CodeTableFunction        = "table_function_not_allowed"
	CodeFunction             = "function_not_allowed"
	CodeSystemTable          = "system_table_not_allowed"
	CodeSetting              = "setting_not_allowed"
	CodeSettingLocked        = "setting_locked"
	CodeFormat               = "format_not_allowed"
	CodeAmbiguous            = "ambiguous_column"
	CodeReservedName         = "reserved_name"
	CodeInvalidName          = "invalid_name"
	CodeCluster              = "cluster_not_allowed"
	CodeRowPolicy            = "invalid_row_policy"
	CodeProfile              = "invalid_settings_profile"
	CodeGrant                = "invalid_grant"
	CodeRole                 = "invalid_role"
	CodeWorkload             = "invalid_workload"
	CodeSortingKey           = "invalid_sorting_key"
	CodeCreateTable          = "invalid_create_table"
	CodeInsert               = "invalid_insert"
	CodeInternal             = "statement_verification_failed"
)
