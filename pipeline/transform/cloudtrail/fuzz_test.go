package cloudtrail

import (
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

// FuzzDecode: Decode must not panic; on success every row is a compact JSON object, on error
// the buffer is untouched.
func FuzzDecode(f *testing.F) {
	f.Add(sample(f))
	f.Add([]byte(`{"Records":[{"eventTime":"2023-07-19T21:35:02Z"},{"timestamp":1}]}`))
	f.Add([]byte(`{"Records":[1]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var b rows.Buffer
		if err := Decode(body, &b); err != nil {
			if len(b.B) != 0 || b.Rows != 0 {
				t.Fatal("rows left after an error")
			}
			return
		}
		rowstest.Lines(t, &b)
	})
}
