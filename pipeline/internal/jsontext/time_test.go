package jsontext

import (
	"math"
	"testing"
	"time"
)

func TestAppendTime(t *testing.T) {
	f := func(sec, nsec int64, want string) {
		t.Helper()
		if got := string(AppendTime(nil, sec, nsec)); got != `"`+want+`"` {
			t.Fatalf("%d,%d: got %s, want %s", sec, nsec, got, want)
		}
	}
	f(0, 0, "1970-01-01T00:00:00.000000000Z")
	f(1717243200, 123456789, "2024-06-01T12:00:00.123456789Z")
	f(951782400, 0, "2000-02-29T00:00:00.000000000Z")
	f(-1, 0, "1969-12-31T23:59:59.000000000Z")
	f(0, -1, "1969-12-31T23:59:59.999999999Z")
	f(253402300799, 999999999, "9999-12-31T23:59:59.999999999Z")
	if got := string(AppendUnixNano(nil, math.MaxUint64)); got != `"2554-07-21T23:34:33.709551615Z"` {
		t.Fatalf("max uint64: %s", got)
	}
	if got := string(AppendUnixMilli(nil, 1552518346236)); got != `"2019-03-13T23:05:46.236000000Z"` {
		t.Fatalf("millis: %s", got)
	}
}

func FuzzAppendTime(f *testing.F) {
	f.Add(int64(0), int64(0))
	f.Add(int64(-62135596800), int64(5))
	f.Add(int64(1717243200), int64(-123))
	f.Fuzz(func(t *testing.T, sec, nsec int64) {
		sec %= 1 << 40 // keep time.Unix in range
		want := `"` + time.Unix(sec, nsec).UTC().Format(TimeLayout) + `"`
		if got := string(AppendTime(nil, sec, nsec)); got != want {
			t.Fatalf("%d,%d: got %s, want %s", sec, nsec, got, want)
		}
	})
}
