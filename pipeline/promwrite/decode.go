// Package promwrite decodes Prometheus remote-write requests (1.0 prometheus.WriteRequest
// and 2.0 io.prometheus.write.v2.Request, snappy-compressed protobuf) into the rows of
// the Prometheus app's tables (query/promstore), encoded in the engine's RowBinary
// format as the sections of one log record (pipeline.EncodeSections).
package promwrite

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"mime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/query/promstore"
)

// Errors callers branch on; each wraps the detail.
var (
	// ErrUnsupportedMediaType: a content type, protobuf message or encoding this
	// receiver does not read (HTTP 415).
	ErrUnsupportedMediaType = errors.New("unsupported media type")
	// ErrTooLarge: the decompressed body exceeds the limit (HTTP 413).
	ErrTooLarge = errors.New("request too large")
	// ErrInvalid: the body is not a valid request of its message type (HTTP 400, which
	// senders do not retry).
	ErrInvalid = errors.New("invalid remote-write request")
)

// Message types, as the proto parameter of Content-Type names them.
const (
	V1 = "prometheus.WriteRequest"
	V2 = "io.prometheus.write.v2.Request"
)

// Negotiate returns the message type of a request from its Content-Type and
// Content-Encoding, as the remote-write specifications define them: protobuf only,
// snappy only, no proto parameter meaning 1.0.
func Negotiate(contentType, contentEncoding string) (string, error) {
	if enc := strings.TrimSpace(contentEncoding); enc != "" && !strings.EqualFold(enc, "snappy") {
		return "", fmt.Errorf("%w: Content-Encoding %q; remote write is snappy-compressed", ErrUnsupportedMediaType, enc)
	}
	if strings.TrimSpace(contentType) == "" {
		return V1, nil
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/x-protobuf" {
		return "", fmt.Errorf("%w: Content-Type %q; send application/x-protobuf", ErrUnsupportedMediaType, contentType)
	}
	switch proto := params["proto"]; proto {
	case "", V1:
		return V1, nil
	case V2:
		return V2, nil
	default:
		return "", fmt.Errorf("%w: proto=%s; this receiver reads %s and %s", ErrUnsupportedMediaType, proto, V1, V2)
	}
}

// Batch is one request as table rows.
type Batch struct {
	// Samples, Histograms and Exemplars count what the request wrote (the 2.0
	// X-Prometheus-Remote-Write-*-Written answer headers); Series the series.
	Samples, Histograms, Exemplars, Series int
	Sections                               []pipeline.Section
	// Digest identifies the request's content (message type and decompressed body):
	// a retry of the same request has the same digest.
	Digest [sha256.Size]byte
}

// Rows is the number of samples, histograms and exemplars.
func (b *Batch) Rows() int { return b.Samples + b.Histograms + b.Exemplars }

// Decode decompresses (snappy) and decodes a request of message type msg, at most
// maxSize bytes decompressed.
func Decode(msg string, body []byte, maxSize int) (*Batch, error) {
	n, err := snappy.DecodedLen(body)
	if err != nil {
		return nil, fmt.Errorf("%w: the body is not snappy-compressed: %v", ErrInvalid, err)
	}
	if n > maxSize {
		return nil, fmt.Errorf("%w: %d bytes decompressed, at most %d per request", ErrTooLarge, n, maxSize)
	}
	plain, err := snappy.Decode(nil, body)
	if err != nil {
		return nil, fmt.Errorf("%w: the body is not snappy-compressed: %v", ErrInvalid, err)
	}
	return DecodePlain(msg, plain)
}

// DecodePlain decodes an uncompressed request of message type msg.
func DecodePlain(msg string, plain []byte) (*Batch, error) {
	return decodePlain(msg, plain, true)
}

// decodePlain is DecodePlain; without wire, every request is decoded with prompb's
// generated unmarshaler (the differential tests' reference).
func decodePlain(msg string, plain []byte, wire bool) (*Batch, error) {
	e := newEncoder()
	switch msg {
	case V1:
		if wire && e.v1Wire(plain) {
			break
		}
		e = newEncoder()
		var req prompb.WriteRequest
		if err := req.Unmarshal(plain); err != nil {
			return nil, fmt.Errorf("%w: not a %s: %v", ErrInvalid, V1, err)
		}
		if err := e.v1(&req); err != nil {
			return nil, err
		}
	case V2:
		var req writev2.Request
		if err := req.Unmarshal(plain); err != nil {
			return nil, fmt.Errorf("%w: not a %s: %v", ErrInvalid, V2, err)
		}
		if err := e.v2(&req); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: message %s", ErrUnsupportedMediaType, msg)
	}
	b := e.batch()
	h := sha256.New()
	h.Write([]byte(msg))
	h.Write([]byte{0})
	h.Write(plain)
	h.Sum(b.Digest[:0])
	return b, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// checkLabels validates a series' labels (names non-empty, UTF-8, not repeated, a
// metric name) and drops those with empty values, which Prometheus treats as absent.
func checkLabels(ls []promstore.Label, what string) ([]promstore.Label, error) {
	// Sorted by name (as the series id wants them anyway), a repeated name is adjacent.
	slices.SortFunc(ls, func(a, b promstore.Label) int { return strings.Compare(a.Name, b.Name) })
	out := ls[:0]
	name := false
	for i, l := range ls {
		if l.Name == "" {
			return nil, invalid("%s has a label with an empty name", what)
		}
		if !utf8.ValidString(l.Name) || !utf8.ValidString(l.Value) {
			return nil, invalid("%s: label %q is not valid UTF-8", what, l.Name)
		}
		if i > 0 && ls[i-1].Name == l.Name {
			return nil, invalid("%s: label %q appears twice", what, l.Name)
		}
		if l.Value == "" {
			continue
		}
		if l.Name == promstore.MetricNameLabel {
			name = true
		}
		out = append(out, l)
	}
	if !name && what != "exemplar" {
		return nil, invalid("%s has no metric name (label __name__)", what)
	}
	return out, nil
}

// absolute turns delta-encoded integer bucket counts into absolute counts.
func absolute(deltas []int64) []float64 {
	out := make([]float64, len(deltas))
	var c int64
	for i, d := range deltas {
		c += d
		out[i] = float64(c)
	}
	return out
}

// familyName is the metric family a series' metadata describes: classic histograms'
// and summaries' series carry suffixes their family does not.
func familyName(metric, typ string) string {
	switch typ {
	case "histogram", "gaugehistogram", "summary":
		for _, s := range []string{"_bucket", "_sum", "_count", "_created"} {
			if f, ok := strings.CutSuffix(metric, s); ok {
				return f
			}
		}
	}
	return metric
}
