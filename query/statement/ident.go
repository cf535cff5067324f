package statement

import (
	"strings"
	"unicode/utf8"
)

// checkName refuses identifier text that the engine could read differently
// from the parser library: the library ends a quoted identifier at the first
// closing quote and knows no escapes, the engine honours backslash escapes.
// Without backslashes and quote characters both read the same name, and
// re-quoting it with backticks is exact.
func checkName(name string, pos int) *Error {
	if name == "" {
		return badRequest(CodeInvalidName, pos, "", "empty identifier")
	}
	if !utf8.ValidString(name) {
		return badRequest(CodeInvalidName, pos, "", "identifier is not valid UTF-8")
	}
	for _, r := range name {
		switch {
		case r == '\\':
			return badRequest(CodeInvalidName, pos, "remove the backslash; escapes are not allowed in identifiers",
				"identifier %q contains a backslash", name)
		case r == '`' || r == '"':
			return badRequest(CodeInvalidName, pos, "", "identifier %q contains a quote character", name)
		case r < 0x20 || r == 0x7f:
			return badRequest(CodeInvalidName, pos, "", "identifier contains a control character")
		}
	}
	return nil
}

// isPlain reports whether name needs no quoting: [A-Za-z_][A-Za-z0-9_]*.
func isPlain(name string) bool {
	if name == "" || !isIdentStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isIdentStart(c) && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// quoteName renders a checked name: plain names bare unless forced,
// everything else in backticks.
func quoteName(name string, force bool) string {
	if isPlain(name) && !force {
		return name
	}
	return "`" + name + "`"
}

// isLogicalName reports whether name is a valid logical database or table
// name: ^[A-Za-z_][A-Za-z0-9_]{0,63}$ without "__" (DESIGN.md, engine
// naming), so engine names never collide.
func isLogicalName(name string) bool {
	return isPlain(name) && len(name) <= 64 && !strings.Contains(name, "__")
}

// isEngineDatabase reports whether name has the shape of an organization's
// engine database, o_<32 lowercase hex>__<logical name>. Names from the
// Catalog are checked so that a catalog bug can never route a query into
// _svc or another namespace.
func isEngineDatabase(name string) bool {
	const hexLen = 32
	if len(name) < 2+hexLen+2+1 || !strings.HasPrefix(name, "o_") || name[2+hexLen:2+hexLen+2] != "__" {
		return false
	}
	for i := 2; i < 2+hexLen; i++ {
		if c := name[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return isPlain(name[2+hexLen+2:])
}

// plainString returns the value of a string literal body when it holds no
// escape sequence, so that the raw text is the value. Places where a string
// literal's value decides something (cluster names, setting values) accept
// only such literals.
func plainString(raw string) (string, bool) {
	if strings.ContainsRune(raw, '\\') || strings.Contains(raw, "''") {
		return "", false
	}
	for _, r := range raw {
		if r < 0x20 || r == 0x7f {
			return "", false
		}
	}
	return raw, utf8.ValidString(raw)
}
