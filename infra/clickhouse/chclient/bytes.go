package chclient

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/svc-data/svc/query"
)

var _ query.ByteEngine = (*Client)(nil)

// StreamBytes implements query.ByteEngine: the statement's result as the engine encodes it
// in format (RowBinary, Native, ...), read from its HTTP answer without decoding. An error
// the engine reports after the answer began comes back from the reader's last Read.
func (c *Client) StreamBytes(ctx context.Context, sql, format string, opt query.Options) (io.ReadCloser, error) {
	resp, err := c.stream(ctx, sql, format, opt)
	if err != nil {
		return nil, err
	}
	return newFramedReader(resp.Body, resp.Header.Get("X-ClickHouse-Exception-Tag")), nil
}

// framedHold is how many bytes of a binary answer are held back until the next arrive or
// the answer ends: more than the longest error block the engine appends to an answer
// already under way (its message is cut at 8 KiB), so that the block is found whole
// and none of it reaches the decoder as data.
const framedHold = 16<<10 + 512

// framedReader reads a binary answer that may end with the engine's error block
// ("\r\n__exception__\r\n<tag>\r\n<text>\n<len> <tag>\r\n__exception__\r\n", tag from
// X-ClickHouse-Exception-Tag): the last framedHold bytes are kept back until the
// answer ends, and an answer ending with the block ends in its error.
type framedReader struct {
	body io.ReadCloser
	tag  string
	buf  []byte // read from body, not yet handed out
	off  int    // buf[off:] is pending
	eof  bool   // body ended; buf[off:] is all that is left (the block removed)
	err  error  // what the last Read returns once buf is drained
}

func newFramedReader(body io.ReadCloser, tag string) *framedReader {
	return &framedReader{body: body, tag: tag, buf: make([]byte, 0, 256<<10)}
}

func (f *framedReader) Read(p []byte) (int, error) {
	for !f.eof && len(f.buf)-f.off <= framedHold {
		if f.off > 0 && cap(f.buf)-len(f.buf) < 32<<10 {
			f.buf = append(f.buf[:0], f.buf[f.off:]...)
			f.off = 0
		}
		if cap(f.buf)-len(f.buf) < 32<<10 {
			f.buf = append(f.buf, make([]byte, 64<<10)...)[:len(f.buf)]
		}
		n, err := f.body.Read(f.buf[len(f.buf):cap(f.buf)])
		f.buf = f.buf[:len(f.buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			f.eof, f.err = true, io.EOF
			f.cutErrorBlock()
		case err != nil:
			f.eof, f.err = true, Classify(err)
		}
	}
	avail := len(f.buf) - f.off
	if !f.eof {
		avail -= framedHold
	}
	if avail <= 0 {
		return 0, f.err
	}
	n := copy(p, f.buf[f.off:f.off+avail])
	f.off += n
	return n, nil
}

// cutErrorBlock removes the engine's error block from the end of the answer, if there is
// one, and makes its error the answer's end.
func (f *framedReader) cutErrorBlock() {
	if f.tag == "" {
		return
	}
	rest := f.buf[f.off:]
	if !bytes.HasSuffix(rest, []byte(" "+f.tag+"\r\n__exception__\r\n")) {
		return
	}
	start := bytes.LastIndex(rest, []byte("\r\n__exception__\r\n"+f.tag+"\r\n"))
	if start < 0 {
		f.err = errors.New("engine answer ended in an error block that could not be read")
		f.buf = f.buf[:f.off]
		return
	}
	f.err = inBandException(rest[start:], f.tag)
	f.buf = f.buf[:f.off+start]
}

func (f *framedReader) Close() error { return f.body.Close() }
