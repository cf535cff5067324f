package spl

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// flattenDoc calls fn for each leaf path of the JSON object s (the engine's toJSONString of
// a document), but string leaves whose path skip names, with the value encoding/json
// decodes with UseNumber (json.Number, string, bool, nil, []any): what decoding s into a
// map and walking it with flatten gives, without the map and, for strings without escapes,
// without a copy (an events result holds up to 10,001 documents). It reports false, having
// called fn for nothing, for text it does not read; the caller then decodes s with
// encoding/json.
func flattenDoc(s string, skip func(path string) bool, fn func(path string, v any)) bool {
	type leaf struct {
		path string
		v    any
	}
	var leaves []leaf
	p := docScanner{s: s, skip: skip}
	p.fn = func(path string, v any) { leaves = append(leaves, leaf{path, v}) }
	if !p.object("") {
		return false
	}
	if p.space(); p.i != len(s) {
		return false
	}
	for _, l := range leaves {
		fn(l.path, l.v)
	}
	return true
}

type docScanner struct {
	s    string
	i    int
	skip func(string) bool
	fn   func(string, any)
}

func (p *docScanner) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

// object reads the object at p.i, calling fn for its leaves under prefix.
func (p *docScanner) object(prefix string) bool {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return false
	}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.space()
		k, ok := p.str()
		if !ok {
			return false
		}
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		if p.i >= len(p.s) {
			return false
		}
		switch {
		case p.s[p.i] == '{':
			if !p.object(path) {
				return false
			}
		case p.s[p.i] == '"' && p.skip(path):
			if _, _, ok := p.stringEnd(); !ok {
				return false
			}
		default:
			v, ok := p.value()
			if !ok {
				return false
			}
			p.fn(path, v)
		}
		p.space()
		if p.i >= len(p.s) {
			return false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// stringEnd steps over the string at p.i and returns its text with the quotes, and whether
// it holds escapes.
func (p *docScanner) stringEnd() (quoted string, escaped, ok bool) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false, false
	}
	for j := p.i + 1; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '"':
			quoted = p.s[p.i : j+1]
			p.i = j + 1
			return quoted, escaped, true
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return "", false, false
		}
	}
	return "", false, false
}

// str reads the string at p.i: copied as it is without escapes, else decoded by
// encoding/json (invalid UTF-8 becomes U+FFFD there, as it would in the document's decode).
func (p *docScanner) str() (string, bool) {
	quoted, escaped, ok := p.stringEnd()
	if !ok {
		return "", false
	}
	v := quoted[1 : len(quoted)-1]
	if !escaped && utf8.ValidString(v) {
		return v, true
	}
	var out string
	if err := json.Unmarshal([]byte(quoted), &out); err != nil {
		return "", false
	}
	return out, true
}

// value reads a scalar or an array at p.i.
func (p *docScanner) value() (any, bool) {
	switch c := p.s[p.i]; {
	case c == '"':
		return p.str()
	case c == 't' && strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return true, true
	case c == 'f' && strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return false, true
	case c == 'n' && strings.HasPrefix(p.s[p.i:], "null"):
		p.i += 4
		return nil, true
	case c == '-' || (c >= '0' && c <= '9'):
		j := p.i
		for j < len(p.s) && strings.IndexByte("+-.eE0123456789", p.s[j]) >= 0 {
			j++
		}
		num := p.s[p.i:j]
		if !json.Valid([]byte(num)) {
			return nil, false
		}
		p.i = j
		return json.Number(num), true
	case c == '[':
		// Arrays are rare in these documents: encoding/json reads them.
		dec := json.NewDecoder(strings.NewReader(p.s[p.i:]))
		dec.UseNumber()
		var v []any
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		p.i += int(dec.InputOffset())
		return v, true
	}
	return nil, false
}
