package transform

import (
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

// FuzzDecode runs every transform on arbitrary bodies, compressed or not: no panic, valid
// rows on success, an untouched buffer on error.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), []byte(`{"resourceSpans":[]}`), false)
	f.Add(uint8(3), []byte(`{"messageType":"DATA_MESSAGE","logEvents":[{"timestamp":1,"message":"m"}]}`), true)
	f.Add(uint8(4), []byte(`{"Records":[{"eventTime":"2023-07-19T21:33:41Z"}]}`), false)
	f.Add(uint8(5), []byte(`{"records":[{"data":"eyJhIjoxfQ=="}]}`), true)
	f.Fuzz(func(t *testing.T, which uint8, body []byte, gzipped bool) {
		names := Names()
		tr, _ := Lookup(names[int(which)%len(names)])
		req := Request{Body: body, ContentType: "application/json", MaxBodySize: 1 << 20}
		if gzipped {
			req.Body = gz(body)
		}
		var b rows.Buffer
		if err := tr.Decode(req, &b); err != nil {
			if len(b.B) != 0 || b.Rows != 0 {
				t.Fatal("rows left after an error")
			}
			return
		}
		rowstest.Lines(t, &b)
	})
}
