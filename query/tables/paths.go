package tables

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/svc-data/svc/query/sqlquote"
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

// RecordPathTypes implements pipeline.PathTypesRecorder: paths and types an encoding of
// the rows reported (pipeline.EncodedRows.Paths) go to the table's schema as the engine's
// would.
func (m *Manager) RecordPathTypes(ctx context.Context, id uuid.UUID, seen map[string][]string) error {
	if _, ok := m.cat.Model().TableByID(id); !ok {
		return nil
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
	const settings = " SETTINGS type_json_skip_duplicated_paths = 1"
	src := sampleSource(columnType, rows)
	lines, err := e.QueryStrings(ctx, PathsSQL(src)+settings)
	if err != nil {
		return err
	}
	chunk := map[string][]string{}
	AddPathLines(chunk, lines)
	err = AddElementPaths(chunk, src, func(sql string) ([]string, error) { return e.QueryStrings(ctx, sql+settings) })
	for p, types := range chunk {
		for _, t := range types {
			if !slices.Contains(seen[p], t) {
				seen[p] = append(seen[p], t)
			}
		}
	}
	return err
}

// PathsSQL is the statement listing the leaf paths of the documents of src (a table or
// table function with a doc column), one "path\ttype\ttype..." line each.
func PathsSQL(src string) string {
	return "SELECT concat(p.1, '\\t', arrayStringConcat(p.2, '\\t')) FROM (SELECT arrayJoin(distinctJSONPathsAndTypes(doc)) AS p FROM " + src + ")"
}

// ElementSep joins the path of an array of objects to the paths inside its elements:
// items[].sku is the path sku in the elements of the array at items (docs/typing.md).
const ElementSep = "[]."

// maxElementDepth bounds how deep arrays of objects inside elements are followed
// (items[].tags[].k is depth 2).
const maxElementDepth = 4

// AddElementPaths adds to seen the paths inside the elements of every array of objects
// seen (a path with a type Array(JSON(...))): items[].sku with the types the engine
// stored for sku in the elements, and so on into arrays of objects inside elements. A
// path listing says only that items holds Array(JSON(...)); what is inside is read by one
// more statement per such array, over the same rows (src, as in PathsSQL).
func AddElementPaths(seen map[string][]string, src string, query func(sql string) ([]string, error)) error {
	done := map[string]bool{}
	for {
		var next []string
		for p, types := range seen {
			for _, t := range types {
				key := p + "\x00" + t
				if done[key] || !IsObjectArray(t) || strings.Count(p, ElementSep) >= maxElementDepth-1 {
					continue
				}
				done[key] = true
				next = append(next, p, t)
			}
		}
		if len(next) == 0 {
			return nil
		}
		for i := 0; i < len(next); i += 2 {
			p, t := next[i], next[i+1]
			arr, ok := elementArraySQL(p, t, seen)
			if !ok {
				continue
			}
			lines, err := query("SELECT concat(p.1, '\\t', arrayStringConcat(p.2, '\\t')) FROM (SELECT arrayJoin(distinctJSONPathsAndTypes(e)) AS p FROM (SELECT arrayJoin(" +
				arr + ") AS e FROM " + src + "))")
			if err != nil {
				return err
			}
			for i, l := range lines {
				lines[i] = p + ElementSep + l
			}
			AddPathLines(seen, lines)
		}
	}
}

// IsObjectArray reports whether an engine type is an array of objects.
func IsObjectArray(t string) bool {
	return strings.HasPrefix(t, "Array(JSON")
}

// elementArraySQL renders the array of every element of the arrays of objects at path
// (typed t) in a document doc: for items it is the array at doc.items, for
// items[].tags the tags arrays of all items elements, flattened.
func elementArraySQL(path, t string, seen map[string][]string) (string, bool) {
	parts := strings.Split(path, ElementSep)
	expr := ""
	for i, part := range parts {
		typ := t
		if i < len(parts)-1 {
			// the enclosing array: its one object-array type
			outer := strings.Join(parts[:i+1], ElementSep)
			typ = ""
			for _, ot := range seen[outer] {
				if IsObjectArray(ot) {
					if typ != "" {
						return "", false
					}
					typ = ot
				}
			}
			if typ == "" {
				return "", false
			}
		}
		ref := quotePath(part)
		if i == 0 {
			expr = "dynamicElement(doc." + ref + ", " + sqlquote.String(typ) + ")"
			continue
		}
		expr = "arrayFlatten(arrayMap(x -> dynamicElement(x." + ref + ", " + sqlquote.String(typ) + "), " + expr + "))"
	}
	return expr, true
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
