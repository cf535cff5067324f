package query

import (
	"bufio"
	"bytes"

	"github.com/svc-data/svc/query/format"
)

// Test hooks for the external tests (lines_test.go), which need the engine client.

// SpliceLines renders engine JSONCompactEachRowWithNamesAndTypes lines in an API format
// (JSON or JSONEachRow) as the query API serves them, with zero statistics; ok is false
// when the types are not served this way.
func SpliceLines(name string, names, types []byte, rows [][]byte) (out []byte, ok bool, err error) {
	sp, ok := newSplicer(names, types)
	if !ok {
		return nil, false, nil
	}
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	w, err := format.New(name, bw, nil)
	if err != nil {
		return nil, true, err
	}
	ow, _ := format.AsObjectWriter(w)
	_ = w.Begin(sp.cols)
	var obj []byte
	for _, r := range rows {
		if obj, err = sp.appendRow(obj[:0], r); err != nil {
			return nil, true, err
		}
		_ = ow.RowObject(obj)
	}
	_ = w.End(format.Stats{})
	bw.Flush()
	return b.Bytes(), true, nil
}

// LinesFormat is the engine format SpliceLines reads.
const LinesFormat = linesFormat
