package chclient

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// block is the Native block of docs built whole, as InsertRows built it before it read
// the block straight from the rows.
func block(docs []string) []byte { return typedBlock("JSON", docs) }

// typedBlock is block with the column declared as typ.
func typedBlock(typ string, docs []string) []byte {
	var b []byte
	b = binary.AppendUvarint(b, 1)
	b = binary.AppendUvarint(b, uint64(len(docs)))
	for _, s := range []string{"doc", typ} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.LittleEndian.AppendUint64(b, jsonStringSerialization)
	for _, d := range docs {
		b = binary.AppendUvarint(b, uint64(len(d)))
		b = append(b, d...)
	}
	return b
}

func TestNativeBodyReadsTheBlock(t *testing.T) {
	long := `{"s":"` + strings.Repeat("x", 300) + `"}` // a length of two bytes
	parts := [][]byte{
		[]byte("{\"a\":1}\n\n{\"b\":2}\r\n"),
		nil,
		[]byte("\n"),
		[]byte(long + "\n{\"c\":\"tab\\t\"}\r\r\n"),
		[]byte("{\"last\":true}"), // no newline at the end
	}
	want := block([]string{`{"a":1}`, `{"b":2}`, long, `{"c":"tab\t"}`, `{"last":true}`})
	b := newNativeBody("", parts)
	if b.size != int64(len(want)) {
		t.Fatalf("size %d, want %d", b.size, len(want))
	}
	if err := iotest.TestReader(b, want); err != nil {
		t.Fatal(err)
	}
	// Every read size, and a second reader of the same parts (a retried request).
	for _, n := range []int{1, 2, 3, 7, 64, 4096} {
		var got bytes.Buffer
		r := b.again()
		buf := make([]byte, n)
		for {
			k, err := r.Read(buf)
			got.Write(buf[:k])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("reads of %d bytes: %q\nwant %q", n, got.Bytes(), want)
		}
	}
	if string(parts[0]) != "{\"a\":1}\n\n{\"b\":2}\r\n" {
		t.Fatal("the parts were changed")
	}
	empty := newNativeBody("", nil)
	if got, _ := io.ReadAll(empty); !bytes.Equal(got, block(nil)) {
		t.Fatalf("no rows: %q", got)
	}
}

// TestNativeBodyDeclaresTheColumnType: a table with typed paths gets a block whose column
// is declared with its own type, so the engine parses rows straight into it instead of
// into plain JSON and then casting the whole column (three times the CPU per row, issue
// 27).
func TestNativeBodyDeclaresTheColumnType(t *testing.T) {
	const typed = "JSON(_time DateTime64(3, 'UTC'), _raw String)"
	got, _ := io.ReadAll(newNativeBody(typed, [][]byte{[]byte(`{"_raw":"x"}` + "\n")}))
	if want := typedBlock(typed, []string{`{"_raw":"x"}`}); !bytes.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
