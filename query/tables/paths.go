package tables

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// RecordPaths implements pipeline.PathRecorder: the engine reads rows exactly as an
// insert into the table would (same column type, distinctJSONPathsAndTypes), and the
// paths and types it reports go to the table's schema in the catalog. Rows the engine
// cannot parse are skipped here; the insert sends them to dead letters.
func (m *Manager) RecordPaths(ctx context.Context, id uuid.UUID, rows [][]byte) error {
	t, ok := m.cat.Model().TableByID(id)
	if !ok {
		return nil
	}
	e, err := m.engines.Engine(t.ClusterID)
	if err != nil {
		return err
	}
	seen, err := PathsOf(ctx, e, t.ColumnType, rows)
	if err != nil {
		return err
	}
	return m.cat.RecordPaths(ctx, id, seen)
}

// PathsOf returns the leaf paths of rows with the engine types of their values, as an
// insert into a column of columnType would store them.
func PathsOf(ctx context.Context, e Engine, columnType string, rows [][]byte) (map[string][]string, error) {
	seen := map[string][]string{}
	for len(rows) > 0 {
		n, size := 0, 0
		for n < len(rows) && (n == 0 || size+len(rows[n]) <= maxSampleBytes) {
			size += len(rows[n]) + 1
			n++
		}
		chunk := rows[:n]
		rows = rows[n:]
		err := pathsInto(ctx, e, columnType, chunk, seen)
		if err == nil || !isEngineException(err) {
			if err != nil {
				return nil, err
			}
			continue
		}
		// One bad row fails the chunk: read the rows one by one and skip the bad.
		for _, row := range chunk {
			if err := pathsInto(ctx, e, columnType, [][]byte{row}, seen); err != nil && !isEngineException(err) {
				return nil, err
			}
		}
	}
	return seen, nil
}

func pathsInto(ctx context.Context, e Engine, columnType string, rows [][]byte, seen map[string][]string) error {
	lines, err := e.QueryStrings(ctx, PathsSQL(sampleSource(columnType, rows))+" SETTINGS type_json_skip_duplicated_paths = 1")
	if err != nil {
		return err
	}
	AddPathLines(seen, lines)
	return nil
}

// PathsSQL is the statement listing the leaf paths of the documents of src (a table or
// table function with a doc column), one "path\ttype\ttype..." line each.
func PathsSQL(src string) string {
	return "SELECT concat(p.1, '\\t', arrayStringConcat(p.2, '\\t')) FROM (SELECT arrayJoin(distinctJSONPathsAndTypes(doc)) AS p FROM " + src + ")"
}

// AddPathLines adds the lines of PathsSQL to seen, without repeating a type.
func AddPathLines(seen map[string][]string, lines []string) {
	for _, line := range lines {
		parts := strings.Split(line, "\t")
		for _, t := range parts[1:] {
			if !slices.Contains(seen[parts[0]], t) {
				seen[parts[0]] = append(seen[parts[0]], t)
			}
		}
	}
}
