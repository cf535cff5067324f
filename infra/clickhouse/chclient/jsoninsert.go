package chclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/query/sqlquote"
)

// stringTypes remembers what the engine types strings as, for jsonBlock's ambiguous
// strings: the values of a field repeat (paths, user agents, addresses), so the engine is
// asked about each once.
type stringTypes struct {
	mu     sync.Mutex
	known  map[string]bool // true: String
	probed bool            // whether the engine was probed (probe)
	times  bool            // the engine agreed on the timestamp shapes
	blocks bool            // the engine reads the flattened serialization
}

// maxKnownStrings bounds stringTypes.known; it starts over when full.
const maxKnownStrings = 1 << 16

// maxAskedStrings bounds the strings one insert asks the engine about; past it the rows
// travel as text.
const maxAskedStrings = 4096

// EncodeRows implements pipeline.RowsEncoder with jsonBlock.
func (c *Client) EncodeRows(ctx context.Context, columnType string, rows ...[]byte) pipeline.EncodedRows {
	e := pipeline.EncodedRows{ColumnType: columnType, Rows: rows}
	if block, paths, ok := c.jsonBlock(ctx, columnType, rows); ok {
		e.Block, e.Paths = block, paths
	}
	return e
}

// InsertEncoded implements pipeline.RowsEncoder: the block, or else the rows as text.
func (c *Client) InsertEncoded(ctx context.Context, database, table, token string, e pipeline.EncodedRows) error {
	var stmt strings.Builder
	writeInsert(&stmt, database, table, token, "Native")
	sql := strings.TrimSuffix(stmt.String(), "\n")
	if e.Block != nil {
		return c.raw.insertBlock(ctx, sql, e.Block)
	}
	return c.raw.insert(ctx, sql, newNativeBody(e.ColumnType, e.Rows))
}

var _ pipeline.RowsEncoder = (*Client)(nil)

// jsonBlock returns the rows as a block in the JSON type's flattened serialization with
// its paths and types, or ok false where they must travel as text (nativeBody): the
// engine does not read blocks, the encoder refused them, the engine types one of their
// strings other than as String, or asking it failed.
func (c *Client) jsonBlock(ctx context.Context, columnType string, rows [][]byte) ([]byte, map[string][]string, bool) {
	times, blocks, err := c.strs.probe(ctx, c)
	if err != nil || !blocks {
		return nil, nil, false
	}
	block, paths, ambiguous, ok := encodeJSONBlock(columnType, rows, times)
	if !ok {
		return nil, nil, false
	}
	if len(ambiguous) == 0 {
		return block, paths, true
	}
	var ask []string
	c.strs.mu.Lock()
	for _, s := range ambiguous {
		str, known := c.strs.known[s]
		if known && !str {
			c.strs.mu.Unlock()
			return nil, nil, false
		}
		if !known {
			ask = append(ask, s)
		}
	}
	c.strs.mu.Unlock()
	if len(ask) == 0 {
		return block, paths, true
	}
	if len(ask) > maxAskedStrings {
		return nil, nil, false
	}
	types, _, err := c.typesOf(ctx, ask)
	if err != nil {
		return nil, nil, false
	}
	all := true
	c.strs.mu.Lock()
	if c.strs.known == nil || len(c.strs.known)+len(ask) > maxKnownStrings {
		c.strs.known = make(map[string]bool, len(ask))
	}
	for i, s := range ask {
		c.strs.known[s] = types[i] == "String"
		all = all && types[i] == "String"
	}
	c.strs.mu.Unlock()
	if !all {
		return nil, nil, false
	}
	return block, paths, true
}

// probe checks once that the engine reads a block in the flattened serialization (an
// engine older than the pinned one may not: its rows then all travel as text), and that
// it types and reads the timestamp shapes as parseTimestamp does (it reads times without
// a zone in its own zone, which must be UTC); where it does not, every such string is
// asked about instead. An engine that cannot be reached is probed again next time.
func (s *stringTypes) probe(ctx context.Context, c *Client) (times, blocks bool, err error) {
	s.mu.Lock()
	done, times, blocks := s.probed, s.times, s.blocks
	s.mu.Unlock()
	if done {
		return times, blocks, nil
	}
	samples := []string{"2026-12-01 10:11:12", "2026-12-01 10:11:12.5", "2026-02-28T23:59:59Z",
		"2024-02-29T00:00:00.123456789Z", "1971-01-01 00:00:00.000001"}
	types, ns, err := c.typesOf(ctx, samples)
	switch {
	case err == nil:
		times, blocks = true, true
		for i, v := range samples {
			sec, frac, _ := parseTimestamp([]byte(v))
			want := "DateTime"
			if fracDigits([]byte(v)) > 0 {
				want = "DateTime64(9)"
			}
			times = times && types[i] == want && ns[i] == sec*1e9+frac
		}
	case !isEngineException(err):
		return false, false, err
	}
	if blocks {
		// A block of every kind, read by the engine into nothing.
		const typ = "JSON(_time DateTime64(3, 'UTC'), _raw String)"
		rows := `{"_time":"2026-12-01 10:11:12.345","_raw":"r","i":-1,"f":1.5,"b":true,"s":"x","o":{"k":"v"},` +
			`"a":["x"],"ai":[1],"af":[0.5],"ab":[false],"e":[],"t":"2026-12-01 10:11:12.5"}` + "\n" + `{"i":"y","n":null}` + "\n"
		block, _, _, ok := encodeJSONBlock(typ, [][]byte{[]byte(rows)}, times)
		if !ok {
			blocks = false
		} else if err := c.raw.insertBlock(ctx, "INSERT INTO FUNCTION null("+sqlquote.String("doc "+typ)+") FORMAT Native", block); err != nil {
			if !isEngineException(err) {
				return false, false, err
			}
			blocks = false
		}
	}
	s.mu.Lock()
	s.probed, s.times, s.blocks = true, times, blocks
	s.mu.Unlock()
	return times, blocks, nil
}

// isEngineException reports whether err is the engine's refusal of a statement, rather
// than a failure to reach it.
func isEngineException(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex)
}

// typesOf asks the engine the type it gives each string as a JSON value, and the time it
// reads from those it types as a time (nanoseconds since the epoch, else 0).
func (c *Client) typesOf(ctx context.Context, strs []string) (types []string, ns []int64, err error) {
	var data strings.Builder
	for i, s := range strs {
		v, err := json.Marshal(s)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(&data, "{\"i\":%d,\"s\":%s}\n", i, v)
	}
	sql := "SELECT toString(doc.i.:Int64) || '\t' || dynamicType(doc.s) || '\t' || toString(multiIf(" +
		"dynamicType(doc.s) = 'DateTime', toInt64(toUnixTimestamp(doc.s.:DateTime)) * 1000000000, " +
		"dynamicType(doc.s) = 'DateTime64(9)', toUnixTimestamp64Nano(doc.s.:`DateTime64(9)`), 0)) " +
		"FROM format(JSONAsObject, 'doc JSON', " + sqlquote.String(data.String()) + ") " +
		// A block per row: within a block the engine types a path's value by the types the
		// path already has (jsonBlock.stringKind), and each string is asked about alone.
		"SETTINGS max_block_size = 1"
	lines, err := c.QueryStrings(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	types, ns = make([]string, len(strs)), make([]int64, len(strs))
	got := 0
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			return nil, nil, fmt.Errorf("types of strings: unexpected line %q", l)
		}
		i, err1 := strconv.Atoi(f[0])
		n, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || i < 0 || i >= len(strs) || types[i] != "" {
			return nil, nil, fmt.Errorf("types of strings: unexpected line %q", l)
		}
		types[i], ns[i], got = f[1], n, got+1
	}
	if got != len(strs) {
		return nil, nil, fmt.Errorf("types of strings: %d answers for %d strings", got, len(strs))
	}
	return types, ns, nil
}
