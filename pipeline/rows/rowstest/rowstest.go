// Package rowstest has helpers for tests of decoders that fill a rows.Buffer.
package rowstest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/svc-data/svc/pipeline/rows"
)

// Lines checks that b holds newline-terminated compact JSON objects, as many as b.Rows says,
// and returns them.
func Lines(t testing.TB, b *rows.Buffer) []string {
	t.Helper()
	if len(b.B) == 0 {
		if b.Rows != 0 {
			t.Fatalf("%d rows counted in an empty buffer", b.Rows)
		}
		return nil
	}
	if b.B[len(b.B)-1] != '\n' {
		t.Fatalf("rows do not end with a newline: %q", b.B)
	}
	lines := strings.Split(string(b.B[:len(b.B)-1]), "\n")
	if len(lines) != b.Rows {
		t.Fatalf("%d rows counted, %d lines", b.Rows, len(lines))
	}
	for _, l := range lines {
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(l)); err != nil || compact.String() != l || l[0] != '{' {
			t.Fatalf("row is not a compact JSON object (%v): %s", err, l)
		}
	}
	return lines
}

// Equal checks that the JSON texts got and want are the same value: same members with the
// same values, in any order (numbers compared as decimal text).
func Equal(t testing.TB, got, want string) {
	t.Helper()
	g, w := decode(t, got), decode(t, want)
	if !reflect.DeepEqual(g, w) {
		gi, _ := json.MarshalIndent(g, "", "  ")
		wi, _ := json.MarshalIndent(w, "", "  ")
		t.Fatalf("rows differ\n got: %s\nwant: %s", gi, wi)
	}
}

func decode(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %s: %v", s, err)
	}
	return v
}
