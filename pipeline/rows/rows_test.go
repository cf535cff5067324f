package rows

import "testing"

func TestGrowMakesRoomUpToTheLimit(t *testing.T) {
	b := Buffer{B: []byte("{}\n"), Rows: 1, MaxBytes: 100}
	b.Grow(1 << 20)
	if string(b.B) != "{}\n" || b.Rows != 1 {
		t.Fatalf("Grow changed the rows: %q %d", b.B, b.Rows)
	}
	if c := cap(b.B); c < 101 || c > 1<<10 {
		t.Fatalf("cap %d, want room up to the limit and not past it", c)
	}
	u := Buffer{}
	u.Grow(5000)
	if cap(u.B) < 5000 || len(u.B) != 0 {
		t.Fatalf("unlimited: len %d cap %d", len(u.B), cap(u.B))
	}
	u.Grow(-1) // nothing
}
