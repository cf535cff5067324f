package pipeline_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/pipeline"
)

// TestStringKindsTheEngineTypesAsString checks the shape hash's string kinds against the
// engine: every string given the plain kind 's' must be a String to the engine's JSON
// type, or rows of a known shape could carry a path type the schema never recorded.
// Random hexadecimal ids with a letter must be 's' (the shape cache depends on it).
func TestStringKindsTheEngineTypesAsString(t *testing.T) {
	c := chtest.Client(t, chtest.Start(t, clickhouse.ProcessConfig{}).URL())
	r := rand.New(rand.NewPCG(1, 2))
	hex := func(n int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, n)
		for i := range b {
			b[i] = digits[r.IntN(16)]
		}
		return string(b)
	}
	values := []string{"2026-11-25", "2026-11-25T09:41:36.637235772Z", "2026-11-25 09:41:36", "25 Nov 2026",
		"Nov 25 2026", "Wed, 25 Nov 2026 10:00:00 GMT", "25dec2026", "1dec2026", "25Dec2026", "2026/11/25",
		"Nov 25 10:00:01 web-1 sshd[4021]: Accepted publickey for deploy from 10.0.0.7 port 52144 ssh2",
		"12fe", "1e5", "0x1F", "20261125", "123", "feb", "Feb 2026", "monday", "Mon 2026-11-23", "hello 2026",
		"4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "ABCDEF12", "1Dec", "dec2026",
		// Longer than 64 bytes: 's' without a look (an access-log line opens with digits).
		`10.0.1.2 - - [25/Nov/2026:09:41:36 +0000] "GET /cart HTTP/1.1" 200 5120 "-" "curl/8.5"`,
		"2026-11-25T09:41:36.637235772Z 2026-11-25T09:41:36.637235772Z 2026-11-25",
		strings.Repeat("1", 65), "2026-11-25 " + strings.Repeat("0", 60)}
	for range 200 {
		values = append(values, hex(32), hex(16))
	}
	var plain []string
	for _, v := range values {
		if pipeline.StringKind([]byte(v)) == 's' {
			plain = append(plain, v)
		}
	}
	var rows strings.Builder
	for _, v := range plain {
		fmt.Fprintf(&rows, `{"v":%q}`+"\n", v)
	}
	ctx := context.Background()
	got, err := c.QueryStrings(ctx, "SELECT concat(JSONExtractString(j, 'v'), '\\t', toString(JSONAllPathsWithTypes(doc))) FROM format(JSONAsObject, 'doc JSON', "+
		quote(rows.String())+") ARRAY JOIN [toJSONString(doc)] AS j")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(plain) {
		t.Fatalf("%d answers for %d values", len(got), len(plain))
	}
	for _, g := range got {
		if v, typ, _ := strings.Cut(g, "\t"); typ != "{'v':'String'}" {
			t.Errorf("%q has the plain string kind, but the engine types it %s", v, typ)
		}
	}
	for range 200 {
		for _, id := range []string{hex(32), hex(16)} {
			if strings.Contains(id, "dec") || strings.Contains(id, "feb") || !strings.ContainsAny(id, "abcdef") {
				continue // may be a date; all digits have a kind per length
			}
			if k := pipeline.StringKind([]byte(id)); k != 's' {
				t.Fatalf("id %s has kind %q, want 's'", id, k)
			}
		}
	}
}

func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
