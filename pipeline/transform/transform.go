// Package transform is the registry of source-format transforms: what
// POST /v1/tables/{table}?transform=<name> and the OTLP endpoints run to turn a request body
// into rows. One package per source holds each decoder; this package removes the content
// coding, enforces the size limit and dispatches by name.
package transform

import (
	"errors"
	"fmt"
	"strings"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/transform/cloudtrail"
	"github.com/svc-data/svc/pipeline/transform/cloudwatchlogs"
	"github.com/svc-data/svc/pipeline/transform/firehose"
	"github.com/svc-data/svc/pipeline/transform/otlplogs"
	"github.com/svc-data/svc/pipeline/transform/otlpmetrics"
	"github.com/svc-data/svc/pipeline/transform/otlptraces"
)

// Request is what a transform reads of an HTTP request.
type Request struct {
	// Body as received, possibly compressed.
	Body []byte
	// ContentType is the Content-Type header. The OTLP transforms choose protobuf or JSON by
	// it; the others read JSON whatever it says.
	ContentType string
	// ContentEncoding is the Content-Encoding header: empty, identity, gzip or x-gzip. A body
	// that is itself a gzip file (CloudWatch Logs payloads, CloudTrail log files) is
	// recognized without it.
	ContentEncoding string
	// Columns names the tab-separated values of firehose records; nil for the others (see
	// firehose.ParseColumns and docs/transforms.md for where the edge takes it from).
	Columns []string
	// MaxBodySize bounds the body after decompression, in bytes; 0 means
	// rows.MaxDecompressed (100 MiB, the OTLP/HTTP limit).
	MaxBodySize int
}

// Transform turns request bodies of one source format into rows.
type Transform struct {
	name   string
	decode func(body []byte, req *Request, dst *rows.Buffer) error
}

// Name is the transform's name, as in ?transform=.
func (t Transform) Name() string { return t.name }

// Decode appends the rows of req to dst. It removes the content coding first (see
// rows.Buffer.Inflate). Errors matching rows.ErrTooLarge answer 413, rows.ErrUnsupportedMediaType
// 415, any other 400 with the error's message. Records a transform drops as invalid while
// keeping the rest (OTLP partial success) are counted in dst.Rejected. On error dst is left
// as it was.
func (t Transform) Decode(req Request, dst *rows.Buffer) error {
	if t.decode == nil {
		return errors.New("transform: Decode called on the zero Transform")
	}
	body, err := dst.Inflate(req.Body, req.ContentEncoding, req.MaxBodySize)
	if err != nil {
		return err
	}
	return t.decode(body, &req, dst)
}

var registry = []Transform{
	{"otlp-traces", func(body []byte, req *Request, dst *rows.Buffer) error {
		return otlptraces.Decode(body, req.ContentType, dst)
	}},
	{"otlp-logs", func(body []byte, req *Request, dst *rows.Buffer) error {
		return otlplogs.Decode(body, req.ContentType, dst)
	}},
	{"otlp-metrics", func(body []byte, req *Request, dst *rows.Buffer) error {
		return otlpmetrics.Decode(body, req.ContentType, dst)
	}},
	{"cloudwatch-logs", func(body []byte, _ *Request, dst *rows.Buffer) error {
		return cloudwatchlogs.Decode(body, dst)
	}},
	{"cloudtrail", func(body []byte, _ *Request, dst *rows.Buffer) error {
		return cloudtrail.Decode(body, dst)
	}},
	{"firehose", func(body []byte, req *Request, dst *rows.Buffer) error {
		_, err := firehose.Decode(body, req.Columns, dst)
		return err
	}},
}

// Lookup returns the transform with the given name.
func Lookup(name string) (Transform, bool) {
	for _, t := range registry {
		if t.name == name {
			return t, true
		}
	}
	return Transform{}, false
}

// Get returns the transform with the given name, or an *UnknownError naming the allowed ones.
func Get(name string) (Transform, error) {
	if t, ok := Lookup(name); ok {
		return t, nil
	}
	return Transform{}, &UnknownError{Name: name}
}

// Names lists the transforms, in the order the documentation gives them.
func Names() []string {
	names := make([]string, len(registry))
	for i, t := range registry {
		names[i] = t.name
	}
	return names
}

// UnknownError is a transform name that is not in the registry. The edge answers 400.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown transform %q; use one of: %s", e.Name, strings.Join(Names(), ", "))
}
