package chclient_test

import (
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/svc-data/svc/query"
)

// TestStreamBytesReadsTheAnswerWhole reads a RowBinary answer of several MiB and wants
// every row, in order, and the end of the answer.
func TestStreamBytesReadsTheAnswerWhole(t *testing.T) {
	c, ctx := engineWith(t)
	const n = 2_000_000
	body, err := c.StreamBytes(ctx, "SELECT number FROM numbers(2000000)", "RowBinary", query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != n*8 {
		t.Fatalf("%d bytes, want %d", len(data), n*8)
	}
	for i := range n {
		if v := binary.LittleEndian.Uint64(data[i*8:]); v != uint64(i) {
			t.Fatalf("row %d is %d", i, v)
		}
	}
}

// TestStreamBytesEndsInTheEnginesError fails a statement after its answer began: the
// reader hands out only rows (every byte of the answer's rows is 0, which no byte of the
// engine's error block is) and ends in the engine's error, classified.
func TestStreamBytesEndsInTheEnginesError(t *testing.T) {
	c, ctx := engineWith(t)
	body, err := c.StreamBytes(ctx, "SELECT throwIf(number = 3000000, 'the test fails here') FROM numbers(4000000) SETTINGS max_block_size = 65536",
		"RowBinary", query.Options{})
	if err != nil {
		t.Fatalf("the engine answered before streaming: %v (the test needs an error after the answer began)", err)
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err == nil || !strings.Contains(err.Error(), "the test fails here") {
		t.Fatalf("read %d bytes, then %v; want the engine's error", len(data), err)
	}
	if len(data) == 0 {
		t.Fatal("no rows before the error: the error block was not reached mid-answer")
	}
	for i, b := range data {
		if b != 0 {
			t.Fatalf("byte %d of %d is %q: part of the error block was handed out as data", i, len(data), b)
		}
	}
	t.Logf("%d rows, then: %v", len(data), err)
}
