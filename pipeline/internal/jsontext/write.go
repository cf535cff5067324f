package jsontext

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The Append functions write compact JSON. Inside an object or an array a separating comma is
// needed before every member but the first: Sep decides it from the last byte written, which is
// '{' or '[' right after an opening and the end of a value otherwise. That keeps writers free of
// "first" flags.

// Sep appends ',' unless dst ends with '{' or '['.
func Sep(dst []byte) []byte {
	if n := len(dst); n > 0 && dst[n-1] != '{' && dst[n-1] != '[' {
		return append(dst, ',')
	}
	return dst
}

// AppendField appends a separator if needed and `"name":`. name is a literal of the caller that
// needs no escaping.
func AppendField(dst []byte, name string) []byte {
	dst = Sep(dst)
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// AppendKey appends a separator if needed and key, escaped, followed by ':'.
func AppendKey(dst []byte, key string) []byte {
	return append(AppendString(Sep(dst), key), ':')
}

// safe marks the bytes a JSON string can hold as they are.
var safe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, so the result is
// always valid JSON.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	run := 0
	for i := 0; i < len(s); {
		c := s[i]
		if safe[c] {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, s[run:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				run = i
				continue
			}
			i += n
			continue
		}
		dst = append(dst, s[run:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		run = i
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}

// AppendBytes appends b as a JSON string, as AppendString does.
func AppendBytes(dst, b []byte) []byte {
	return AppendString(dst, unsafeString(b))
}

// AppendInt appends n.
func AppendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// AppendUint appends n.
func AppendUint(dst []byte, n uint64) []byte { return strconv.AppendUint(dst, n, 10) }

// AppendFloat appends f as the shortest number that reads back as f. JSON has no NaN or
// infinities: those become the strings "NaN", "Infinity" and "-Infinity", as protobuf's JSON
// mapping writes them.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	// Like encoding/json: plain notation in the usual range, exponent outside it.
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(dst, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// AppendBool appends true or false.
func AppendBool(dst []byte, b bool) []byte { return strconv.AppendBool(dst, b) }

// AppendUnescaped appends the contents of a JSON string (without its quotes, already validated)
// with escapes decoded. A \u escape of a lone surrogate becomes U+FFFD.
func AppendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if len(raw)-i >= 6 && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2 := utf16.DecodeRune(r, hex4(raw[i+2:])); r2 != utf8.RuneError {
						dst = utf8.AppendRune(dst, r2)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
