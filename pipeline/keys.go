package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The idempotency-key store lives in the engine, beside the data it protects: a key is
// recorded after its rows were inserted and before the batch's offset is committed.
const (
	keysTable = "_svc.ingest_keys"
	// KeyRetention is how long a key makes retries of its request land once.
	KeyRetention = "INTERVAL 7 DAY"
	// keysPerStatement bounds the keys one statement carries, which keeps it far below
	// the engine's max_query_size (a key is up to a few hundred bytes).
	keysPerStatement = 200
)

// EnsureSchema creates what the pipeline keeps in an engine.
func EnsureSchema(ctx context.Context, e Engine) error {
	for _, stmt := range []string{
		"CREATE DATABASE IF NOT EXISTS _svc",
		"CREATE TABLE IF NOT EXISTS " + keysTable + ` (
			key String,
			table_id String,
			at DateTime DEFAULT now()
		) ENGINE = ReplacingMergeTree ORDER BY key TTL at + ` + KeyRetention + `
		SETTINGS non_replicated_deduplication_window = 10000`,
	} {
		if err := e.ExecArgs(ctx, stmt); err != nil {
			return fmt.Errorf("create pipeline schema: %w", err)
		}
	}
	return nil
}

func storedKey(r Record) string {
	if k := r.Headers[HeaderIdem]; k != "" {
		return r.Headers[HeaderTable] + "/" + k
	}
	return ""
}

// withoutSeenKeys drops records whose idempotency key was already inserted, and repeats
// of a key within the group.
func (w *worker) withoutSeenKeys(ctx context.Context, g *group) ([]Record, error) {
	var keys []string
	for _, r := range g.recs {
		if k := storedKey(r); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return g.recs, nil
	}
	var seen []string
	for chunk := range slices.Chunk(keys, keysPerStatement) {
		err := w.retry(ctx, func() error {
			found, err := w.c.engine.QueryStringsArgs(ctx, "SELECT key FROM "+keysTable+" WHERE has(?, key)", chunk)
			if err == nil {
				seen = append(seen, found...)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("look up idempotency keys: %w", err)
		}
	}
	skip := make(map[string]bool, len(seen))
	for _, k := range seen {
		skip[k] = true
	}
	out := make([]Record, 0, len(g.recs))
	for _, r := range g.recs {
		k := storedKey(r)
		if k != "" {
			if skip[k] {
				w.c.stats.duplicateRequest()
				continue
			}
			skip[k] = true
		}
		out = append(out, r)
	}
	return out, nil
}

func (w *worker) recordKeys(ctx context.Context, p *plan, start, end int64, groups []*group) error {
	var keys []any // key, table id, key, table id...
	for _, g := range groups {
		for _, r := range g.recs {
			if k := storedKey(r); k != "" {
				keys = append(keys, k, r.Headers[HeaderTable])
			}
		}
	}
	// The chunks are the same on a replay of the plan (same records, same order), so
	// each chunk's token repeats and a replayed chunk is a no-op.
	for i, chunk := range slices.Collect(slices.Chunk(keys, 2*keysPerStatement)) {
		token := w.token(p, start, end, "keys")
		if i > 0 {
			token += "/" + strconv.Itoa(i)
		}
		stmt := "INSERT INTO " + keysTable + " (key, table_id) SETTINGS insert_deduplication_token = ? VALUES " +
			strings.Repeat("(?, ?),", len(chunk)/2-1) + "(?, ?)"
		args := append([]any{token}, chunk...)
		if err := w.retry(ctx, func() error { return w.c.engine.ExecArgs(ctx, stmt, args...) }); err != nil {
			return fmt.Errorf("record idempotency keys: %w", err)
		}
	}
	return nil
}
