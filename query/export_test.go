package query

// Test hooks for the external tests (lines_test.go), which need the engine client.

// SpliceLines rewrites engine JSONCompactEachRowWithNamesAndTypes lines into JSONEachRow,
// as the query API serves them; ok is false when the types are not served this way.
func SpliceLines(names, types []byte, rows [][]byte) (out []byte, ok bool, err error) {
	sp, ok := newSplicer(names, types)
	if !ok {
		return nil, false, nil
	}
	for _, r := range rows {
		if out, err = sp.appendRow(out, r); err != nil {
			return out, true, err
		}
	}
	return out, true, nil
}

// LinesFormat is the engine format SpliceLines reads.
const LinesFormat = linesFormat
