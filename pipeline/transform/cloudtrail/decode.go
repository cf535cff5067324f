// Package cloudtrail flattens CloudTrail log files into rows, one per record (transform
// "cloudtrail"). docs/transforms.md describes the rows.
package cloudtrail

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
)

// Decode appends one row per record of a CloudTrail log file ({"Records": [...]}, as CloudTrail
// writes to S3, usually gzipped) to dst. The body must already be decompressed. Each row is the
// record with its CloudTrail field names and values as they are, plus "timestamp": eventTime
// in the layout every transform uses, when the record has a parseable eventTime and no
// "timestamp" member of its own. On error dst is left as it was.
func Decode(body []byte, dst *rows.Buffer) error {
	mark := dst.Mark()
	err := decode(body, dst)
	if err != nil {
		dst.Restore(mark)
	}
	return err
}

func decode(body []byte, dst *rows.Buffer) error {
	r := jsontext.NewReader(body)
	if k := r.Kind(); k != jsontext.Object {
		if k == jsontext.Invalid {
			if _, err := r.Raw(); err != nil {
				return err
			}
		}
		return fmt.Errorf("not a CloudTrail log file: the body is %s, not an object with a Records array", k)
	}
	found := false
	err := r.Object(func(key []byte) error {
		if string(key) != "Records" {
			return nil
		}
		if k := r.Kind(); k != jsontext.Array {
			return fmt.Errorf("Records is %s, not an array", k)
		}
		found = true
		return r.Array(func(i int) error {
			if k := r.Kind(); k != jsontext.Object {
				return fmt.Errorf("Records[%d] is %s, not an object", i, k)
			}
			if err := appendRecord(r, dst); err != nil {
				var limit *rows.LimitError
				if errors.As(err, &limit) {
					return err
				}
				return fmt.Errorf("Records[%d]: %w", i, err)
			}
			return nil
		})
	})
	if err == nil {
		err = r.End()
	}
	if err == nil && !found {
		err = errors.New("not a CloudTrail log file: it has no Records array")
	}
	return err
}

// appendRecord copies the record at r, compacted, adding the normalized timestamp.
func appendRecord(r *jsontext.Reader, dst *rows.Buffer) error {
	b := append(dst.B, '{')
	var (
		eventTime time.Time
		hasTime   bool
		taken     bool // the record has a "timestamp" member itself
	)
	err := r.Object(func(key []byte) error {
		b = jsontext.AppendKey(b, string(key))
		switch string(key) {
		case "timestamp":
			taken = true
		case "eventTime":
			if r.Kind() != jsontext.String {
				break
			}
			raw, err := r.RawString()
			if err != nil {
				return err
			}
			b = append(b, raw...)
			text := raw[1 : len(raw)-1]
			if bytes.IndexByte(text, '\\') >= 0 {
				text = jsontext.AppendUnescaped(nil, text)
			}
			t, err := time.Parse(time.RFC3339Nano, string(text))
			eventTime, hasTime = t, err == nil
			return nil
		}
		var err error
		b, err = r.AppendCompact(b)
		return err
	})
	if err != nil {
		return err
	}
	if hasTime && !taken {
		b = jsontext.AppendTime(append(b, `,"timestamp":`...), eventTime.Unix(), int64(eventTime.Nanosecond()))
	}
	dst.B = append(b, '}')
	return dst.EndRow()
}
