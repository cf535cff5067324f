package firehose

import (
	"os"
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
	"github.com/svc-data/svc/pipeline/rows/rowstest"
)

// FuzzDecode feeds arbitrary delivery bodies: no panic, valid rows on success, an untouched
// buffer on error.
func FuzzDecode(f *testing.F) {
	sample, _ := os.ReadFile("testdata/delivery.json")
	f.Add(sample, false)
	f.Add(delivery(`{"a":1}`, `[{"b":2}]`, "x\ty\n"), true)
	f.Fuzz(func(t *testing.T, body []byte, tsv bool) {
		check(t, body, tsv)
	})
}

// FuzzRecordData feeds arbitrary record data in a well-formed delivery, the part of the body
// a producer controls.
func FuzzRecordData(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[{"a":1},{}]`, "a\tb\n\\N\tc\\t", "text", "\x1f\x8b", "\xff", " [1]", "{"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, tsv bool) {
		check(t, delivery(string(data)), tsv)
	})
}

func check(t *testing.T, body []byte, tsv bool) {
	var columns []string
	if tsv {
		columns = []string{"a", "b"}
	}
	var b rows.Buffer
	if _, err := Decode(body, columns, &b); err != nil {
		if len(b.B) != 0 || b.Rows != 0 {
			t.Fatal("rows left after an error")
		}
		return
	}
	rowstest.Lines(t, &b)
}
