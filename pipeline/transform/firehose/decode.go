// Package firehose reads Amazon Data Firehose HTTP endpoint deliveries (transform "firehose"):
// the records' base64 data becomes rows, and the endpoint answers in the shape Firehose expects.
// docs/transforms.md describes the rows.
package firehose

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
)

// Decode appends the rows of a delivery body ({"requestId", "timestamp", "records":
// [{"data": base64}]}) to dst, record by record. The body must already be decompressed (Firehose
// sends Content-Encoding: gzip when the stream is set to compress). A record's decoded data
// becomes:
//
//   - a JSON object (first non-space byte '{'): one row;
//   - a JSON array of objects (first non-space byte '['): one row per object;
//   - other UTF-8 text, with columns: one row per non-empty line, tab-separated values named by
//     columns in order (TabSeparated escapes, \N is null);
//   - other UTF-8 text, without columns: one row {"data": text};
//   - anything else (invalid UTF-8, control characters, gzip): an error naming the record.
//
// Decode also returns the envelope, as far as it was read. On error dst is left as it was.
func Decode(body []byte, columns []string, dst *rows.Buffer) (Envelope, error) {
	mark := dst.Mark()
	d := decoders.Get().(*decoder)
	d.columns = d.columns[:0]
	for _, c := range columns {
		d.columns = append(d.columns, string(jsontext.AppendString(nil, c)))
	}
	env, err := d.decode(body, len(columns) > 0, dst)
	decoders.Put(d)
	if err != nil {
		dst.Restore(mark)
	}
	return env, err
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

type decoder struct {
	r       jsontext.Reader
	data    []byte   // the record's decoded data
	text    []byte   // a TSV value without its escapes
	columns []string // column names as JSON strings
}

func (d *decoder) decode(body []byte, tsv bool, dst *rows.Buffer) (Envelope, error) {
	var env Envelope
	r := &d.r
	r.Reset(body)
	if k := r.Kind(); k != jsontext.Object {
		if _, err := r.Raw(); err != nil {
			return env, err
		}
		return env, fmt.Errorf("not a Firehose delivery: the body is %s, not an object with records", k)
	}
	found := false
	err := r.Object(func(key []byte) error {
		switch string(key) {
		case "records":
			if k := r.Kind(); k != jsontext.Array {
				return fmt.Errorf("records is %s, not an array", k)
			}
			found = true
			return r.Array(func(i int) error {
				err := d.record(tsv, dst)
				var limit *rows.LimitError
				if err != nil && !errors.As(err, &limit) {
					err = fmt.Errorf("records[%d]: %w", i, err)
				}
				return err
			})
		default:
			return env.member(r, key)
		}
	})
	if err == nil {
		err = r.End()
	}
	if err == nil && !found {
		err = errors.New("not a Firehose delivery: it has no records array")
	}
	return env, err
}

// record reads one element of records and appends its rows.
func (d *decoder) record(tsv bool, dst *rows.Buffer) error {
	r := &d.r
	if k := r.Kind(); k != jsontext.Object {
		return fmt.Errorf("the record is %s, not an object", k)
	}
	seen := false
	err := r.Object(func(key []byte) error {
		if string(key) != "data" {
			return nil
		}
		if k := r.Kind(); k != jsontext.String {
			return fmt.Errorf("data is %s, not a base64 string", k)
		}
		s, err := r.String()
		if err != nil {
			return err
		}
		seen = true
		if need := base64.StdEncoding.DecodedLen(len(s)); cap(d.data) < need {
			d.data = make([]byte, need)
		} else {
			d.data = d.data[:need]
		}
		n, err := base64.StdEncoding.Decode(d.data, s)
		if err != nil {
			return fmt.Errorf("data is not valid base64: %w", err)
		}
		return d.appendData(d.data[:n], tsv, dst)
	})
	if err == nil && !seen {
		err = errors.New("the record has no data")
	}
	return err
}

// appendData classifies a record's decoded data and appends its rows.
func (d *decoder) appendData(data []byte, tsv bool, dst *rows.Buffer) error {
	if rows.IsGzip(data) {
		return errors.New("data is gzip-compressed, not JSON or UTF-8 text; turn on decompression in the Firehose stream's settings (for CloudWatch Logs sources) or send records uncompressed")
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		err := rows.DecodeJSON(data, dst)
		if err != nil && !errors.Is(err, rows.ErrTooLarge) {
			err = fmt.Errorf("data is not a JSON object or an array of objects: %w", err)
		}
		return err
	}
	if err := checkText(data); err != nil {
		return err
	}
	if tsv {
		return d.appendTSV(data, dst)
	}
	dst.B = jsontext.AppendBytes(append(dst.B, `{"data":`...), data)
	dst.B = append(dst.B, '}')
	return dst.EndRow()
}

// checkText accepts UTF-8 text: no invalid sequences and no control characters but tab,
// newline and carriage return.
func checkText(b []byte) error {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return fmt.Errorf("data is binary (control byte 0x%02x at offset %d), not JSON or UTF-8 text", c, i)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("data is not UTF-8 (byte 0x%02x at offset %d), not JSON or text", c, i)
		}
		i += n
	}
	return nil
}

// appendTSV appends one row per non-empty line of text, its tab-separated values named by the
// columns.
func (d *decoder) appendTSV(text []byte, dst *rows.Buffer) error {
	for line := 1; len(text) > 0; line++ {
		l := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if len(l) == 0 {
			continue
		}
		b := append(dst.B, '{')
		field := 0
		for {
			v := l
			i := bytes.IndexByte(l, '\t')
			if i >= 0 {
				v, l = l[:i], l[i+1:]
			}
			if field < len(d.columns) {
				b = append(jsontext.Sep(b), d.columns[field]...)
				b = d.appendValue(append(b, ':'), v)
			}
			field++
			if i < 0 {
				break
			}
		}
		if field != len(d.columns) {
			return fmt.Errorf("line %d has %d tab-separated values for %d columns", line, field, len(d.columns))
		}
		dst.B = append(b, '}')
		if err := dst.EndRow(); err != nil {
			return err
		}
	}
	return nil
}

// appendValue appends a TabSeparated value as a JSON string, or null for \N.
func (d *decoder) appendValue(b, v []byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 {
		return jsontext.AppendBytes(b, v)
	}
	if len(v) == 2 && v[1] == 'N' {
		return append(b, "null"...)
	}
	t := d.text[:0]
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 == len(v) {
			t = append(t, c)
			continue
		}
		i++
		switch v[i] {
		case 't':
			t = append(t, '\t')
		case 'n':
			t = append(t, '\n')
		case 'r':
			t = append(t, '\r')
		case 'b':
			t = append(t, '\b')
		case 'f':
			t = append(t, '\f')
		case '0':
			t = append(t, 0)
		case '\\', '\'', '"':
			t = append(t, v[i])
		default: // not an escape: kept as written
			t = append(t, '\\', v[i])
		}
	}
	d.text = t
	return jsontext.AppendBytes(b, t)
}

// member reads requestId and timestamp; other members are skipped.
func (e *Envelope) member(r *jsontext.Reader, key []byte) error {
	switch string(key) {
	case "requestId":
		if k := r.Kind(); k != jsontext.String {
			return fmt.Errorf("requestId is %s, not a string", k)
		}
		s, err := r.String()
		e.RequestID = string(s)
		return err
	case "timestamp":
		if k := r.Kind(); k != jsontext.Number {
			return fmt.Errorf("timestamp is %s, not a number", k)
		}
		n, err := r.Number()
		if err != nil {
			return err
		}
		if e.Timestamp, err = strconv.ParseInt(string(n), 10, 64); err != nil {
			return fmt.Errorf("timestamp %s is not a whole number of milliseconds", n)
		}
	}
	return nil
}
