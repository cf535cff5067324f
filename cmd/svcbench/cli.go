package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// benchCLI measures `svc ingest` of a total-row NDJSON file against the edge fed by
// workers HTTP clients posting batch-row JSON arrays (the plain JSON workload of
// bench-ingest), each timed from the first request until every row is queryable on the
// engine. The CLI must not be the bottleneck: ratio = svc / edge, target ≥ 0.9.
func benchCLI(ctx context.Context, st *stack, total, batch, workers int) error {
	svc := filepath.Join(os.Getenv("SVC_BIN_DIR"), "svc")
	if _, err := os.Stat(svc); err != nil {
		return fmt.Errorf("no svc binary in SVC_BIN_DIR: %v", err)
	}
	file := filepath.Join(st.dir, "rows.ndjson")
	if err := writeNDJSON(file, total, batch); err != nil {
		return err
	}
	engineDB, err := st.engineDatabase(ctx)
	if err != nil {
		return err
	}
	for _, t := range []string{"cli_edge", "cli_svc"} {
		tb, _ := json.Marshal(map[string]string{"name": t, "sorting_key": "user.id"})
		if code, b, err := st.post(ctx, "/v1/tables", tb, nil); err != nil || code != 200 {
			return fmt.Errorf("create %s: %d %s %v", t, code, b, err)
		}
	}
	queryable := func(table string, start time.Time) (time.Duration, error) {
		for {
			n, err := st.direct.QueryStrings(ctx, fmt.Sprintf("SELECT toString(count()) FROM `%s`.`%s`", engineDB, table))
			if err == nil && len(n) == 1 && n[0] == fmt.Sprint(total) {
				return time.Since(start), nil
			}
			if time.Since(start) > 5*time.Minute {
				return 0, fmt.Errorf("%s: rows not queryable after 5 minutes (%v, %v)", table, n, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The edge with HTTP workers.
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				j := int(next.Add(1)) - 1
				if j*batch >= total {
					return
				}
				body := plainRows(j*batch, min(batch, total-j*batch))
				h := map[string]string{"Idempotency-Key": fmt.Sprintf("cli-edge-%d", j)}
				for {
					code, _, err := st.post(ctx, "/v1/tables/cli_edge", body, h)
					if err == nil && code >= 200 && code < 300 {
						break
					}
					if ctx.Err() != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	edge, err := queryable("cli_edge", start)
	if err != nil {
		return err
	}

	// svc ingest of the same rows from the file.
	cfg, err := os.MkdirTemp(st.dir, "svc-config-*")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, svc, "ingest", "cli_svc", file, "--url", st.url, "--api-key", st.key)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "HOME="+cfg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start = time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("svc ingest: %v\n%s", err, out.String())
	}
	cli, err := queryable("cli_svc", start)
	if err != nil {
		return err
	}
	rate := func(d time.Duration) float64 { return float64(total) / d.Seconds() }
	fmt.Printf("cli: %d rows; edge = %d HTTP workers posting %d-row JSON arrays; svc = svc ingest of one NDJSON file (its defaults);\n",
		total, workers, batch)
	fmt.Println("each timed from its first request until every row is queryable on the engine; ratio = svc / edge (target ≥ 0.9)")
	table([][]string{{"path", "seconds", "rows/s", "ratio"},
		{"edge, HTTP workers", fmt.Sprintf("%.2f", edge.Seconds()), fmt.Sprintf("%.0f", rate(edge)), ""},
		{"svc ingest", fmt.Sprintf("%.2f", cli.Seconds()), fmt.Sprintf("%.0f", rate(cli)), ratio(rate(cli), rate(edge))}})
	return nil
}

// writeNDJSON writes the plain JSON workload's rows, one per line.
func writeNDJSON(path string, total, batch int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for start := 0; start < total; start += batch {
		arr := plainRows(start, min(batch, total-start))
		var rows []json.RawMessage
		if err := json.Unmarshal(arr, &rows); err != nil {
			return err
		}
		for _, r := range rows {
			w.Write(r)
			w.WriteByte('\n')
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// engineDatabase names the engine database behind the admin key's default database.
func (st *stack) engineDatabase(ctx context.Context) (string, error) {
	return st.engineDatabaseOf(ctx, "default")
}

// engineDatabaseOf is the engine database of the first organization's database db.
func (st *stack) engineDatabaseOf(ctx context.Context, db string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", st.url+"/v1/organizations", nil)
	req.Header.Set("Authorization", "Bearer "+st.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var orgs struct{ Organizations []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&orgs); err != nil || len(orgs.Organizations) == 0 {
		return "", fmt.Errorf("organizations: %v", err)
	}
	return "o_" + strings.ReplaceAll(orgs.Organizations[0].ID, "-", "") + "__" + db, nil
}
