// Package cloudwatchlogs flattens CloudWatch Logs subscription payloads into rows, one per log
// event (transform "cloudwatch-logs"). docs/transforms.md describes the rows.
package cloudwatchlogs

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
	"github.com/svc-data/svc/pipeline/rows"
)

// Decode appends one row per log event of a CloudWatch Logs subscription payload (the JSON
// document CloudWatch Logs gzips and hands to Kinesis, Firehose or Lambda) to dst. The body
// must already be decompressed. A CONTROL_MESSAGE (the health check CloudWatch Logs sends when
// a subscription is created) yields no rows and no error. On error dst is left as it was.
func Decode(body []byte, dst *rows.Buffer) error {
	mark := dst.Mark()
	err := decode(body, dst)
	if err != nil {
		dst.Restore(mark)
	}
	return err
}

func decode(body []byte, dst *rows.Buffer) error {
	var (
		r           = jsontext.NewReader(body)
		messageType []byte
		head        []byte // the payload's members every row carries
		events      []byte // logEvents, read once the head is known
	)
	if r.Kind() != jsontext.Object {
		return notPayload("the body is not a JSON object")
	}
	err := r.Object(func(key []byte) error {
		var (
			name string
			err  error
		)
		switch string(key) {
		case "messageType":
			messageType, err = r.String()
			messageType = append([]byte(nil), messageType...) // the reader reuses its buffer
			return err
		case "logEvents":
			if r.Kind() != jsontext.Array {
				return fmt.Errorf("logEvents is %s, not an array", r.Kind())
			}
			events, err = r.Raw()
			return err
		case "owner":
			name = "owner"
		case "logGroup":
			name = "log_group"
		case "logStream":
			name = "log_stream"
		case "policyLevel":
			name = "policy_level"
		case "subscriptionFilters":
			if r.Kind() != jsontext.Array {
				return fmt.Errorf("subscriptionFilters is %s, not an array", r.Kind())
			}
			head, err = r.AppendCompact(jsontext.AppendField(head, "subscription_filters"))
			return err
		default:
			return nil
		}
		if k := r.Kind(); k != jsontext.String {
			return fmt.Errorf("%s is %s, not a string", key, k)
		}
		raw, err := r.RawString()
		head = append(jsontext.AppendField(head, name), raw...)
		return err
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return err
	}
	switch string(messageType) {
	case "DATA_MESSAGE":
	case "CONTROL_MESSAGE":
		return nil
	case "":
		return notPayload("it has no messageType")
	default:
		return fmt.Errorf("messageType %q is neither DATA_MESSAGE nor CONTROL_MESSAGE", messageType)
	}
	if events == nil {
		return notPayload("it has no logEvents")
	}
	var m message
	r.Reset(events)
	return r.Array(func(i int) error {
		if k := r.Kind(); k != jsontext.Object {
			return fmt.Errorf("logEvents[%d] is %s, not an object", i, k)
		}
		if err := appendEvent(r, &m, dst, head); err != nil {
			var limit *rows.LimitError
			if errors.As(err, &limit) {
				return err
			}
			return fmt.Errorf("logEvents[%d]: %w", i, err)
		}
		return nil
	})
}

func notPayload(why string) error {
	return fmt.Errorf("not a CloudWatch Logs subscription payload: %s", why)
}

// appendEvent writes the row of the event at r.
func appendEvent(r *jsontext.Reader, msg *message, dst *rows.Buffer, head []byte) error {
	start := len(dst.B)
	b := append(dst.B, '{')
	var (
		ts, id, message, fields []byte
		messageJSON             []byte
	)
	err := r.Object(func(key []byte) error {
		var err error
		switch string(key) {
		case "timestamp":
			if k := r.Kind(); k != jsontext.Number {
				return fmt.Errorf("timestamp is %s, not a number", k)
			}
			ts, err = r.Number()
		case "id":
			if k := r.Kind(); k != jsontext.String {
				return fmt.Errorf("id is %s, not a string", k)
			}
			id, err = r.RawString()
		case "message":
			if k := r.Kind(); k != jsontext.String {
				return fmt.Errorf("message is %s, not a string", k)
			}
			if message, err = r.RawString(); err != nil {
				return err
			}
			messageJSON = msg.parse(message)
		case "extractedFields":
			if k := r.Kind(); k != jsontext.Object {
				return fmt.Errorf("extractedFields is %s, not an object", k)
			}
			fields, err = r.Raw()
		}
		return err
	})
	if err != nil {
		return err
	}
	if ts == nil {
		return errors.New("the event has no timestamp")
	}
	if message == nil {
		return errors.New("the event has no message")
	}
	ms, err := strconv.ParseInt(string(ts), 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %s is not a whole number of milliseconds", ts)
	}
	b = jsontext.AppendUnixMilli(append(b, `"timestamp":`...), ms)
	if id == nil {
		id = []byte(`""`)
	}
	b = append(append(b, `,"id":`...), id...)
	b = append(append(b, `,"message":`...), message...)
	if messageJSON != nil {
		b = append(append(b, `,"message_json":`...), messageJSON...)
	}
	if fields != nil {
		r := jsontext.NewReader(fields)
		if b, err = r.AppendCompact(append(b, `,"extracted_fields":`...)); err != nil {
			dst.B = b[:start]
			return err
		}
	}
	if len(head) > 0 {
		b = append(append(b, ','), head...)
	}
	dst.B = append(b, '}')
	return dst.EndRow()
}

// message parses log messages that are JSON objects, reusing its buffers across events.
type message struct {
	r       jsontext.Reader
	text    []byte
	compact []byte
}

// parse returns the message compacted when it is a JSON object (many services log JSON), nil
// otherwise. raw is the quoted message as in the payload. The result is valid until the next
// call.
func (m *message) parse(raw []byte) []byte {
	// Cheap test first: the text must start with '{' after optional whitespace.
	i := 1
	for i < len(raw)-1 && (raw[i] == ' ' || raw[i] == '\\' && (raw[i+1] == 'n' || raw[i+1] == 't' || raw[i+1] == 'r')) {
		if raw[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(raw)-1 || raw[i] != '{' {
		return nil
	}
	m.text = jsontext.AppendUnescaped(m.text[:0], raw[1:len(raw)-1])
	m.r.Reset(m.text)
	var err error
	if m.compact, err = m.r.AppendCompact(m.compact[:0]); err != nil || m.r.End() != nil {
		return nil
	}
	return m.compact
}
