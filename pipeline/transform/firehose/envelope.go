package firehose

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
)

// Envelope is what a delivery says about itself. The endpoint echoes RequestID in its answer.
type Envelope struct {
	RequestID string
	Timestamp int64 // when Firehose sent the request, in milliseconds since the Unix epoch
}

// ParseEnvelope reads requestId and timestamp from a delivery body (decompressed) without
// decoding its records. When the body is malformed it returns what it read before the fault
// with the error, so that an error answer can still carry the request id; the
// X-Amz-Firehose-Request-Id header carries the same id.
func ParseEnvelope(body []byte) (Envelope, error) {
	var env Envelope
	r := jsontext.NewReader(body)
	if k := r.Kind(); k != jsontext.Object {
		return env, fmt.Errorf("not a Firehose delivery: the body is %s, not an object", k)
	}
	err := r.Object(func(key []byte) error { return env.member(r, key) })
	if err == nil {
		err = r.End()
	}
	return env, err
}

// Answers. Firehose treats any status but 200 as a failed delivery and retries it until the
// stream's retry duration runs out, then backs the records up to S3; a body that does not
// follow this shape is also a failure.

// AppendResponse appends the body of a 200 answer: {"requestId":…,"timestamp":…}, timestamp
// being now in milliseconds. Serve it as application/json.
func AppendResponse(dst []byte, requestID string, now time.Time) []byte {
	dst = jsontext.AppendString(append(dst, `{"requestId":`...), requestID)
	dst = jsontext.AppendInt(append(dst, `,"timestamp":`...), now.UnixMilli())
	return append(dst, '}')
}

// AppendErrorResponse appends the body of an error answer: {"requestId":…,"timestamp":…,
// "errorMessage":…}. Firehose logs errorMessage in the stream's error logs.
func AppendErrorResponse(dst []byte, requestID string, now time.Time, message string) []byte {
	dst = AppendResponse(dst, requestID, now)
	dst = jsontext.AppendString(append(dst[:len(dst)-1], `,"errorMessage":`...), message)
	return append(dst, '}')
}

// MaxColumns bounds the number of TSV column names.
const MaxColumns = 1000

// ParseColumns reads a list of TSV column names: names separated by commas, spaces around
// each name ignored ("ts, level, msg"). Names must be distinct and not empty.
func ParseColumns(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("columns is empty; give the names of the tab-separated values, separated by commas")
	}
	names := strings.Split(s, ",")
	if len(names) > MaxColumns {
		return nil, fmt.Errorf("columns names %d columns, more than %d", len(names), MaxColumns)
	}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			return nil, fmt.Errorf("column %d of columns has no name", i+1)
		case seen[n]:
			return nil, fmt.Errorf("column %q appears twice in columns", n)
		}
		seen[n] = true
		names[i] = n
	}
	return names, nil
}

// CommonAttribute returns the value of one of the stream's common attributes ("Parameters"
// in the console) from the X-Amz-Firehose-Common-Attributes header, whose value is
// {"commonAttributes": {"name": "value", ...}}. ok is false when the header or the attribute
// is missing.
func CommonAttribute(header []byte, name string) (value string, ok bool, err error) {
	if len(header) == 0 {
		return "", false, nil
	}
	r := jsontext.NewReader(header)
	err = r.Object(func(key []byte) error {
		if string(key) != "commonAttributes" {
			return nil
		}
		return r.Object(func(key []byte) error {
			if string(key) != name {
				return nil
			}
			if k := r.Kind(); k != jsontext.String {
				return fmt.Errorf("common attribute %q is %s, not a string", name, k)
			}
			s, err := r.String()
			value, ok = string(s), true
			return err
		})
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return "", false, fmt.Errorf("X-Amz-Firehose-Common-Attributes: %w", err)
	}
	return value, ok, nil
}
