package requestlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Redacted replaces the value of a secret field in a kept body.
const Redacted = "[redacted]"

// secretFields are body fields whose values are never kept, matched case-insensitively
// on the field name at any depth; secretParts match any field name containing them.
var (
	secretFields = map[string]bool{"role_arn": true, "external_id": true, "authorization": true, "api_key": true,
		"access_key_id": true, "credentials": true}
	secretParts = []string{"password", "secret", "token", "private_key"}
)

func secretField(name string) bool {
	n := strings.ToLower(name)
	if secretFields[n] {
		return true
	}
	for _, p := range secretParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// KeepBody returns what the log keeps of a JSON request body: the body re-encoded with
// every secret field's value replaced by Redacted, at most MaxBody bytes (long strings
// are cut to fit). A body that is not one JSON value is not kept at all, since a
// text the log could not read might hold anything.
func KeepBody(raw []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return "", false
	}
	if _, err := dec.Token(); err == nil {
		return "", false // trailing data after the value
	}
	v = redact(v)
	for limit := MaxBody; limit >= 16; limit /= 2 {
		out, err := json.Marshal(cut(v, limit))
		if err != nil {
			return "", false
		}
		if len(out) <= MaxBody {
			return string(out), true
		}
	}
	return "", false
}

func redact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if secretField(k) {
				if e != nil {
					x[k] = Redacted
				}
				continue
			}
			x[k] = redact(e)
		}
	case []any:
		for i, e := range x {
			x[i] = redact(e)
		}
	}
	return v
}

// cut returns v with every string longer than limit bytes shortened to limit bytes
// (on a rune boundary) followed by "…".
func cut(v any, limit int) any {
	switch x := v.(type) {
	case string:
		if len(x) <= limit {
			return x
		}
		s := x[:limit]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		return s + "…"
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cut(e, limit)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cut(e, limit)
		}
		return out
	}
	return v
}
