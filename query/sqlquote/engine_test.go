package sqlquote_test

import (
	"context"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/query/sqlquote"
)

// TestEngineReadsBack checks on the real engine that every byte survives a
// literal and an identifier unchanged.
func TestEngineReadsBack(t *testing.T) {
	_, conn := chtest.Engine(t)
	ctx := context.Background()
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, s := range []string{"", "plain", "it's `quoted` \\ here", `C:\new\table\`, "ünï", string(all)} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT "+sqlquote.String(s)).Scan(&got); err != nil {
			t.Fatalf("String(%q): %v", s, err)
		}
		if got != s {
			t.Errorf("String(%q) read back as %q", s, got)
		}
		if s == "" {
			continue // an empty identifier is not a name
		}
		rows, err := conn.Query(ctx, "SELECT 1 AS "+sqlquote.Ident(s))
		if err != nil {
			t.Fatalf("Ident(%q): %v", s, err)
		}
		cols := rows.Columns()
		_ = rows.Close()
		if len(cols) != 1 || cols[0] != s {
			t.Errorf("Ident(%q) read back as %q", s, cols)
		}
	}
}
