package workflows

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestParseBody(t *testing.T) {
	f := func(body string, create bool, field string) {
		t.Helper()
		_, err := parseBody([]byte(body), create)
		var fe *FieldError
		switch {
		case field == "" && err != nil:
			t.Errorf("%s: %v", body, err)
		case field != "" && (!errors.As(err, &fe) || fe.Field != field):
			t.Errorf("%s: %v, want an error naming %s", body, err, field)
		}
	}
	f(`{"name":"a","query":{"database":"d","sql":"SELECT 1"}}`, true, "")
	f(`{"description":null}`, false, "")
	f(`{}`, false, "")
	f(``, false, "body")
	f(`[]`, false, "body")
	f(`{"query":{"sql":"SELECT 1"}}`, true, "name")
	f(`{"name":"a"}`, true, "query")
	f(`{"name":"a","query":"SELECT 1"}`, true, "query")
	f(`{"name":"a","query":{"sql":"SELECT 1"}}`, true, "query.database")
	f(`{"name":"a","query":{"database":"d"}}`, true, "query.sql")
	f(`{"name":"a","query":{"database":1,"sql":"x"}}`, true, "query.database")
	f(`{"sql":"SELECT 1"}`, false, "sql")
	f(`{"database":"d"}`, false, "database")
	f(`{"name":7}`, false, "name")
	f(`{"enabled":"yes"}`, false, "enabled")
	f(`{"enabled":null}`, false, "enabled")
	f(`{"sinks":{}}`, false, "sinks")
	f(`{"sinks":null}`, false, "sinks")
	f(`{"sinks":[1]}`, false, "sinks[0]")
	f(`{"sinks":[{"type":"http","url":"http://x"}]}`, false, "sinks[0].url")
	f(`{"sinks":[{"type":"table","table":"t"}]}`, false, "sinks[0].table")
	f(`{"sinks":[{"type":"http","settings":[]}]}`, false, "sinks[0].settings")
	f(`{"sinks":[{"id":"nope","type":"http"}]}`, false, "sinks[0].id")
	f(`{"sinks":[{"type":"http","settings":{"url":"http://x"}},{"type":5}]}`, false, "sinks[1].type")
}

func TestParseWindow(t *testing.T) {
	now := time.UnixMilli(1_000_000_000_000)
	f := func(from, to string, want Window, field string) {
		t.Helper()
		got, err := ParseWindow(from, to, now)
		var fe *FieldError
		if field != "" {
			if !errors.As(err, &fe) || fe.Field != field {
				t.Errorf("%q..%q: %v, want an error naming %s", from, to, err, field)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("%q..%q: %+v %v, want %+v", from, to, got, err, want)
		}
	}
	day, week := DefaultWindow.Milliseconds(), MaxWindow.Milliseconds()
	f("", "", Window{now.UnixMilli() - day, now.UnixMilli()}, "")
	f("", "5000000000", Window{5_000_000_000 - day, 5_000_000_000}, "")
	f("1", "2", Window{1, 2}, "")
	f("0", strconv.FormatInt(week, 10), Window{0, week}, "")
	f("0", strconv.FormatInt(week+1, 10), Window{}, "from")
	f("2", "2", Window{}, "from")
	f("x", "", Window{}, "from")
	f("", "-1", Window{}, "to")
}

func TestSealerBindsTheSink(t *testing.T) {
	a, err := NewSealer("one secret", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSealer("another secret", "")
	sealed := a.Seal("https://hooks.example/secret", "sink-1")
	if got, err := a.Open(sealed, "sink-1"); err != nil || got != "https://hooks.example/secret" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := a.Open(sealed, "sink-2"); err == nil {
		t.Fatal("a sealed value opened for another sink")
	}
	if _, err := b.Open(sealed, "sink-1"); err == nil {
		t.Fatal("a sealed value opened with another key")
	}
	dir := t.TempDir()
	k1, _ := NewSealer("", dir)
	k2, _ := NewSealer("", dir)
	if got, err := k2.Open(k1.Seal("x", "s"), "s"); err != nil || got != "x" {
		t.Fatalf("the key file does not persist the key: %q %v", got, err)
	}
}

func TestBucketFor(t *testing.T) {
	f := func(span, want int64) {
		t.Helper()
		if got := bucketFor(Window{0, span}); got != want {
			t.Errorf("span %d: bucket %d, want %d", span, got, want)
		}
	}
	f(60_000, 1_000)
	f(300_000, 1_000)
	f(3_600_000, 60_000)
	f(86_400_000, 300_000)
	f(MaxWindow.Milliseconds(), 3_600_000)
}
