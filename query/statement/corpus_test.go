package statement

import (
	"testing"
)

// corpusMinParseShare is the recorded share of the corpus that parses
// (testdata/corpus): realistic analytical ClickHouse statements against the
// row model. The test fails when a change makes it drop; raise it when the
// parser or the pre-passes learn more.
const corpusMinParseShare = 0.959

// TestCorpus analyzes the corpus as an admin key, records every outcome in
// golden files, and reports how much of it the parser (with this package's
// pre-passes) can parse and how much is accepted.
func TestCorpus(t *testing.T) {
	var total, parsed, accepted int
	var failures []string
	runGolden(t, "testdata/corpus", func(t *testing.T, c goldenCase, st *Statement, err error) {
		total++
		if err == nil {
			parsed++
			accepted++
			assertNoLeak(t, c, st)
			assertTables(t, c, st)
			return
		}
		e := err.(*Error)
		if e.Code == codePanic || e.Code == CodeInternal {
			t.Errorf("case %s: %v", c.name, err)
		}
		if e.Code != CodeSyntax {
			parsed++
			return
		}
		failures = append(failures, c.name)
	})
	share := float64(parsed) / float64(total)
	t.Logf("corpus: %d statements, %d parse (%.1f%%), %d accepted (%.1f%%)",
		total, parsed, 100*share, accepted, 100*float64(accepted)/float64(total))
	t.Logf("not parsed: %v", failures)
	if share < corpusMinParseShare {
		t.Errorf("parse share %.3f dropped below the recorded %.3f", share, corpusMinParseShare)
	}
}
