package pipeline

import (
	"bytes"
	"fmt"
	"testing"
)

func TestSplitRowsCutsAtRowBoundaries(t *testing.T) {
	var rows []byte
	for i := range 1000 {
		rows = fmt.Appendf(rows, `{"i":%d,"pad":"%s"}`+"\n", i, bytes.Repeat([]byte{'p'}, i%37))
	}
	for _, size := range []int{1, 10, 100, 4096, len(rows) - 1, len(rows), len(rows) + 1} {
		parts := SplitRows(rows, size)
		if !bytes.Equal(bytes.Join(parts, nil), rows) {
			t.Fatalf("size %d: parts do not rejoin to the rows", size)
		}
		for i, p := range parts {
			if len(p) == 0 || p[len(p)-1] != '\n' {
				t.Fatalf("size %d: part %d does not end a row", size, i)
			}
			if len(p) > size && bytes.Count(p, []byte{'\n'}) > 1 {
				t.Fatalf("size %d: part %d has %d bytes and several rows", size, i, len(p))
			}
		}
	}
}
