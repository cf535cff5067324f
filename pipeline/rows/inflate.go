package rows

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// MaxDecompressed is the default bound on a body after decompression: the spec's OTLP/HTTP
// limit, applied to every body a transform reads.
const MaxDecompressed = 100 << 20

// IsGzip reports whether b starts with the gzip magic bytes. No JSON text and no OTLP protobuf
// message starts with them (0x1f would be field 3 with the invalid wire type 7).
func IsGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// Inflate returns the body with its content coding removed, at most limit bytes long
// (MaxDecompressed when limit is 0), else a LimitError.
//
// contentEncoding is the Content-Encoding header: empty or "identity" leave the body as it is,
// "gzip" or "x-gzip" gunzip it; anything else is a MediaTypeError. After that a body that still
// starts with the gzip magic bytes is gunzipped once more: CloudWatch Logs subscription
// payloads and CloudTrail log files are gzip files themselves and are often posted as they are,
// without the header.
//
// The result aliases body or b's scratch space and is valid until the next Inflate.
func (b *Buffer) Inflate(body []byte, contentEncoding string, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = MaxDecompressed
	}
	switch ce := strings.ToLower(strings.TrimSpace(contentEncoding)); ce {
	case "", "identity":
	case "gzip", "x-gzip":
		out, err := gunzip(b.inflated[0][:0], body, limit)
		b.inflated[0] = out
		if err != nil {
			return nil, err
		}
		body = out
	default:
		return nil, &MediaTypeError{Header: "Content-Encoding", Value: contentEncoding, Want: "gzip or no Content-Encoding"}
	}
	if IsGzip(body) {
		out, err := gunzip(b.inflated[1][:0], body, limit)
		b.inflated[1] = out
		if err != nil {
			return nil, err
		}
		body = out
	}
	if len(body) > limit {
		return nil, &LimitError{What: "the decompressed body", Limit: limit}
	}
	return body, nil
}

var gzipReaders sync.Pool // *gzip.Reader

// gunzip appends the decompressed src to dst, failing once it would pass limit bytes.
func gunzip(dst, src []byte, limit int) ([]byte, error) {
	br := bytes.NewReader(src)
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(br)
	} else {
		err = zr.Reset(br)
	}
	if err != nil {
		return dst, fmt.Errorf("invalid gzip data: %w", err)
	}
	defer gzipReaders.Put(zr)

	// The gzip trailer holds the size of the last member modulo 2^32: a good first guess.
	if len(src) >= 18 {
		if hint := int(binary.LittleEndian.Uint32(src[len(src)-4:])); hint > cap(dst) {
			dst = make([]byte, 0, min(hint, limit)+1)
		}
	}
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := zr.Read(dst[len(dst):min(cap(dst), limit+1)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst, &LimitError{What: "the decompressed body", Limit: limit}
		}
		if errors.Is(err, io.EOF) {
			return dst, nil
		}
		if err != nil {
			return dst, fmt.Errorf("invalid gzip data: %w", err)
		}
	}
}
