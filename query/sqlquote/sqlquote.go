// Package sqlquote renders Go strings as ClickHouse string literals and
// back-quoted identifiers: the one place generated SQL gets its quoting.
package sqlquote

import "strings"

// String renders s as a single-quoted ClickHouse string literal.
func String(s string) string { return quote(s, '\'') }

// Ident renders s as a back-quoted ClickHouse identifier.
func Ident(s string) string { return quote(s, '`') }

// quote escapes the quote byte, backslash and every control byte, so the
// literal stays on one line and reads back byte for byte whatever s holds.
func quote(s string, q byte) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(q)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == 0:
			b.WriteString(`\0`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}
