package chengine

import (
	"bytes"
	"testing"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
)

func TestHelloBlockDecodesAsClickhouseGoExpects(t *testing.T) {
	// clickhouse-go decodes the hello at the revision it announced, then uses the revision
	// the hello reports for everything after it.
	const rev = 54460
	block := proto.Block{}
	r := chproto.NewReader(bytes.NewReader(helloBlock("vm", "26.5.1.1", "Etc/UTC", rev)))
	if err := block.Decode(r, rev); err != nil {
		t.Fatal(err)
	}
	if block.Rows() != 1 || len(block.Columns) != 4 {
		t.Fatalf("%d rows, %d columns", block.Rows(), len(block.Columns))
	}
	want := []any{"vm", "26.5.1.1", uint32(0), "Etc/UTC"}
	for i, c := range block.Columns {
		if got := c.Row(0, false); got != want[i] {
			t.Errorf("column %s = %v, want %v", c.Name(), got, want[i])
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err == nil {
		t.Fatal("empty config validated")
	}
	if err := (Config{Path: "/tmp/x", Lib: "/nonexistent/libchdb.so"}).Validate(); err == nil {
		t.Fatal("a missing library validated")
	}
	if err := (Config{Path: "relative", Lib: "/proc/self/exe", Pool: 1}).Validate(); err == nil {
		t.Fatal("a relative path validated")
	}
	if err := (Config{Path: "/tmp/x", Lib: "/proc/self/exe"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestMarker(t *testing.T) {
	if got := marker("abc-1"); got != "/* svc:qid=abc-1 */ " {
		t.Fatalf("marker = %q", got)
	}
	// An id that could end the comment is encoded.
	if got := marker("x */ DROP"); got != "/* svc:qid=x78202a2f2044524f50 */ " {
		t.Fatalf("marker = %q", got)
	}
	if k := killStatement("abc"); bytes.Contains([]byte(k), []byte("svc:qid=abc */")) {
		t.Fatalf("the KILL matches itself: %s", k)
	}
}
