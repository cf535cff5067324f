package chdb

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/svc-data/svc/infra/testenv"
)

// The engine is process-wide and takes one data path per process, so the tests share one
// directory. They skip when SVC_CHDB_LIB is unset.

var dataDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "chdb-test-")
	if err != nil {
		panic(err)
	}
	dataDir = dir
	// See chengine: on a fresh path without metadata/, DROP ... SYNC never returns.
	_ = os.MkdirAll(filepath.Join(dir, "metadata"), 0o750)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func connect(t testing.TB) *Conn {
	t.Helper()
	lib := testenv.Engine(t)
	if err := Load(lib); err != nil {
		t.Fatal(err)
	}
	c, err := Connect("--path=" + dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestConnectKeepsGoSignalHandling(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := Load(testenv.Engine(t)); err != nil {
		t.Fatal(err)
	}
	snapshotSignals()
	alt := threadAltStack()
	c := connect(t)
	if n := changedSignals(); n != 0 {
		t.Fatalf("%d signal dispositions changed by Connect", n)
	}
	if got := threadAltStack(); got != alt {
		t.Fatalf("Connect left the thread on the engine's signal stack (%#x, was %#x)", got, alt)
	}
	if _, err := c.Query("SELECT 1", "TabSeparated"); err != nil {
		t.Fatal(err)
	}
	if n := changedSignals(); n != 0 {
		t.Fatalf("%d signal dispositions changed by a query", n)
	}
	// A Go panic still unwinds through the runtime's SIGSEGV handler.
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("nil dereference did not panic")
			}
		}()
		var p *int
		_ = *p
	}()
}

func TestQuery(t *testing.T) {
	c := connect(t)
	res, err := c.Query("SELECT {a:UInt32} + 1, {b:String}", "TabSeparated", Param{"a", "41"}, Param{"b", `x\ty`})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Data); got != "42\tx\\ty\n" {
		t.Fatalf("got %q", got)
	}
	_, err = c.Query("SELECT * FROM no_such_table", "TabSeparated")
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != 60 {
		t.Fatalf("unknown table: %v", err)
	}
}

func TestStream(t *testing.T) {
	c := connect(t)
	s, err := c.Stream("SELECT number FROM numbers(1000000)", "TabSeparated")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var lines, chunks int
	for {
		b, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		lines += strings.Count(string(b), "\n")
	}
	if lines != 1_000_000 || chunks < 2 {
		t.Fatalf("%d lines in %d chunks", lines, chunks)
	}
	if st := s.Stats(); st.RowsRead != 1_000_000 {
		t.Fatalf("stats %+v", st)
	}
	// The stream holds the connection until Close; then it is usable again.
	_ = s.Close()
	if _, err := c.Query("SELECT 1", "TabSeparated"); err != nil {
		t.Fatal(err)
	}
}

func TestStreamErrorMidway(t *testing.T) {
	c := connect(t)
	s, err := c.Stream("SELECT throwIf(number = 2000000) FROM numbers(3000000)", "Native")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for {
		_, err := s.Next()
		if err == nil {
			continue
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Code != 395 {
			t.Fatalf("got %v, want code 395", err)
		}
		return
	}
}
