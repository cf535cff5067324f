// Package hec turns the bodies of Splunk HTTP Event Collector requests into log-search rows
// without a tree or reflection: the fast path of edge/ingest's HEC handler.
package hec

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
)

// copyable reports whether a JSON string literal (quotes included) can go into a row as
// it came: valid UTF-8 with no raw control byte, only the escapes every JSON reader takes
// the same way (no \u escape of a surrogate), and a byte that is not blank, so that
// its contents are not all white space (an event the reference decoder refuses).
func copyable(lit []byte) bool {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' || !utf8.Valid(lit) {
		return false
	}
	visible := false
	for i := 1; i < len(lit)-1; i++ {
		switch c := lit[i]; {
		case c == '\\':
			if i+1 >= len(lit)-1 {
				return false
			}
			switch lit[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+6 > len(lit)-1 {
					return false
				}
				v := 0
				for _, h := range lit[i+2 : i+6] {
					switch {
					case h >= '0' && h <= '9':
						v = v<<4 | int(h-'0')
					case h|0x20 >= 'a' && h|0x20 <= 'f':
						v = v<<4 | int(h|0x20-'a'+10)
					default:
						return false
					}
				}
				if v >= 0xd800 && v < 0xe000 {
					return false
				}
				i += 5
			default:
				return false
			}
		case c < 0x20 || c == '"':
			return false
		case c > ' ' && c < 0x7f:
			visible = true
		}
	}
	return visible
}

// Meta holds an event's built-in fields before the event's own: the request's defaults.
type Meta struct {
	Host, Source, Sourcetype, Index string
}

// maxMembers bounds the members of one event kept by the fast path: their keys are compared
// with each other, so very wide events go to the reference decoder.
const maxMembers = 64

// member is a field of the row beyond the built-ins: key and value as bytes of the decoder's
// arena (key: the string's contents, needing no escape; value: compact JSON).
type member struct{ k0, k1, v0, v1 int }

// decoder keeps one request's scratch space; pooled.
type decoder struct {
	r, sub  jsontext.Reader
	arena   []byte
	members []member
	str     []byte
}

// AppendEvents appends one row per event of body (concatenated JSON objects, each
// {"time", "host", "source", "sourcetype", "index", "event", "fields"}) to dst, as the
// reference decoder (edge/ingest's) writes them: _time (epoch seconds, fractions allowed;
// now when absent or null), _raw (a string event's text; any other event's JSON text), the
// built-ins from the event or else m, then a JSON object event's members and the indexed
// fields, later ones replacing earlier ones of the same key, built-in names dropped.
//
// It reports ok=false, with dst as it was, for anything it does not take as it is: no
// events, a value that is not an object, a member given twice, a key that only matches a known one by case, a
// built-in that is not a string, a blank or missing event, fields that are not an object,
// invalid JSON or UTF-8, keys needing escapes, very wide events, a time it cannot read. The
// reference decoder then decides (and answers the error). err is the row limit of dst.
func AppendEvents(body []byte, m Meta, now time.Time, dst *rows.Buffer) (ok bool, err error) {
	d := decoders.Get().(*decoder)
	defer func() {
		d.r.Reset(nil)
		d.sub.Reset(nil)
		if cap(d.arena) > 1<<20 {
			d.arena = nil
		}
		decoders.Put(d)
	}()
	return d.appendEvents(body, m, now, dst)
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

func (d *decoder) appendEvents(body []byte, m Meta, now time.Time, dst *rows.Buffer) (ok bool, err error) {
	mark := dst.Mark()
	dst.Grow(len(body) + len(body)/4)
	d.r.Reset(body)
	n := 0
	for !d.r.AtEnd() {
		ok, err := d.event(m, now, dst)
		if err != nil || !ok {
			dst.Restore(mark)
			return false, err
		}
		n++
	}
	if n == 0 {
		dst.Restore(mark)
		return false, nil
	}
	return true, nil
}

// known names the members of an event the decoder reads.
var known = [][]byte{[]byte("time"), []byte("host"), []byte("source"), []byte("sourcetype"), []byte("index"), []byte("event"), []byte("fields")}

func (d *decoder) event(m Meta, now time.Time, dst *rows.Buffer) (bool, error) {
	if d.r.Kind() != jsontext.Object {
		return false, nil
	}
	var timeRaw, eventRaw, fieldsRaw []byte
	ok := true
	var seen uint8
	err := d.r.Object(func(key []byte) error {
		for i, k := range known {
			if bytes.Equal(key, k) {
				// A repeated member: the reference merges fields and resets a built-in to
				// its default on null; it decides.
				ok = ok && seen&(1<<i) == 0
				seen |= 1 << i
			}
		}
		var err error
		switch string(key) {
		case "time":
			timeRaw, err = d.r.Raw()
		case "event":
			eventRaw, err = d.r.Raw()
		case "fields":
			fieldsRaw, err = d.r.Raw()
		case "host":
			ok = ok && d.meta(&m.Host)
		case "source":
			ok = ok && d.meta(&m.Source)
		case "sourcetype":
			ok = ok && d.meta(&m.Sourcetype)
		case "index":
			ok = ok && d.meta(&m.Index)
		default:
			for _, k := range known {
				if bytes.EqualFold(key, k) {
					ok = false // encoding/json matches member names by case too
				}
			}
		}
		return err
	})
	if err != nil || !ok || len(eventRaw) == 0 {
		return false, nil
	}
	t, good := parseTime(timeRaw, now)
	if !good {
		return false, nil
	}
	d.arena, d.members = d.arena[:0], d.members[:0]
	b := append(dst.B, `{"_time":`...)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, "2006-01-02 15:04:05.000")
	b = append(b, `","_raw":`...)
	switch eventRaw[0] {
	case '"':
		if copyable(eventRaw) { // the same string, as it came
			b = append(b, eventRaw...)
			break
		}
		d.sub.Reset(eventRaw)
		s, err := d.sub.String()
		if err != nil || len(bytes.TrimSpace(s)) == 0 {
			return false, nil
		}
		b = jsontext.AppendBytes(b, s)
	case '{':
		b = jsontext.AppendBytes(b, eventRaw)
		if !d.collect(eventRaw) {
			return false, nil
		}
	default:
		b = jsontext.AppendString(b, string(eventRaw))
	}
	if len(fieldsRaw) > 0 && string(fieldsRaw) != "null" {
		if fieldsRaw[0] != '{' || !d.collect(fieldsRaw) {
			return false, nil
		}
	}
	for _, f := range [...]struct{ name, v string }{{"host", m.Host}, {"source", m.Source}, {"sourcetype", m.Sourcetype}, {"index", m.Index}} {
		b = jsontext.AppendString(jsontext.AppendField(b, f.name), f.v)
	}
	for _, mb := range d.members {
		b = append(b, ',', '"')
		b = append(b, d.arena[mb.k0:mb.k1]...)
		b = append(b, '"', ':')
		b = append(b, d.arena[mb.v0:mb.v1]...)
	}
	dst.B = append(b, '}')
	return true, dst.EndRow()
}

// meta reads a built-in's value: a string replaces *dst, null keeps it; anything else is
// the reference decoder's to refuse.
func (d *decoder) meta(dst *string) bool {
	switch d.r.Kind() {
	case jsontext.Null:
		return d.r.Skip() == nil
	case jsontext.String:
		s, err := d.r.String()
		if err != nil {
			return false
		}
		*dst = string(s)
		return true
	}
	return false
}

// builtin names the row's own fields; an event's members of these names are dropped.
func builtin(k []byte) bool {
	switch string(k) {
	case "_time", "_raw", "host", "source", "sourcetype", "index":
		return true
	}
	return false
}

// collect adds the members of the object obj (valid JSON already) to d.members, replacing
// members of the same key.
func (d *decoder) collect(obj []byte) bool {
	d.sub.Reset(obj)
	ok := true
	err := d.sub.Object(func(key []byte) error {
		if !ok {
			return nil
		}
		for _, c := range key {
			if c < 0x20 || c == '"' || c == '\\' {
				ok = false // a key that needs escaping
				return nil
			}
		}
		if builtin(key) {
			return nil
		}
		k0 := len(d.arena)
		d.arena = append(d.arena, key...)
		k1 := len(d.arena)
		var err error
		d.arena, err = d.sub.AppendCompact(d.arena)
		mb := member{k0, k1, k1, len(d.arena)}
		for i, o := range d.members {
			if bytes.Equal(d.arena[o.k0:o.k1], key) {
				d.members[i] = mb
				return err
			}
		}
		if len(d.members) == maxMembers {
			ok = false
			return nil
		}
		d.members = append(d.members, mb)
		return err
	})
	return err == nil && ok
}

// parseTime reads HEC's time as edge/ingest's parseTime does: epoch seconds as a number or
// a string, fractions allowed (milliseconds kept); now when absent or null.
func parseTime(raw []byte, now time.Time) (time.Time, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return now, true
	}
	f, err := strconv.ParseFloat(strings.Trim(string(raw), `"`), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e3))*1e6), true
}
