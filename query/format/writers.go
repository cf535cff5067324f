package format

import (
	"bufio"
	"strconv"
	"time"
)

// jsonWriter writes JSON and JSONCompact: one object with meta, data, rows, statistics
// and hints.
type jsonWriter struct {
	w       *bufio.Writer
	hints   []string
	compact bool
	cols    []Column
	rows    int
	buf     []byte
}

func (j *jsonWriter) ContentType() string { return "application/json; charset=UTF-8" }

func (j *jsonWriter) Begin(cols []Column) error {
	j.cols = cols
	b := appendMeta(append(j.buf[:0], `{"meta":[`...), cols)
	b = append(b, `],"data":[`...)
	j.buf = b
	_, err := j.w.Write(b)
	return err
}

func (j *jsonWriter) Row(values []any) error {
	b := j.buf[:0]
	if j.rows > 0 {
		b = append(b, ',')
	}
	j.rows++
	if j.compact {
		b = append(b, '[')
	} else {
		b = append(b, '{')
	}
	for i, v := range values {
		if i > 0 {
			b = append(b, ',')
		}
		if !j.compact {
			b = appendJSONString(b, j.cols[i].Name)
			b = append(b, ':')
		}
		b = appendJSON(b, v, j.cols[i].Type)
	}
	if j.compact {
		b = append(b, ']')
	} else {
		b = append(b, '}')
	}
	j.buf = b
	_, err := j.w.Write(b)
	return err
}

// RowObject implements ObjectWriter (not for JSONCompact).
func (j *jsonWriter) RowObject(obj []byte) error {
	if j.rows > 0 {
		if err := j.w.WriteByte(','); err != nil {
			return err
		}
	}
	j.rows++
	_, err := j.w.Write(obj)
	return err
}

func (j *jsonWriter) Progress(uint64, uint64, time.Duration) error { return nil }

func (j *jsonWriter) End(s Stats) error {
	b := append(j.buf[:0], `],"rows":`...)
	b = strconv.AppendInt(b, int64(j.rows), 10)
	b = append(b, `,"statistics":`...)
	b = appendStats(b, s)
	b = append(b, `,"hints":[`...)
	for i, h := range j.hints {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, h)
	}
	b = append(b, "]}\n"...)
	j.buf = b
	_, err := j.w.Write(b)
	return err
}

func (j *jsonWriter) Fail(err error) error {
	b := append(j.buf[:0], `],"rows":`...)
	b = strconv.AppendInt(b, int64(j.rows), 10)
	b = append(b, `,"exception":`...)
	b = appendJSONString(b, err.Error())
	b = append(b, "}\n"...)
	_, werr := j.w.Write(b)
	return werr
}

func appendStats(b []byte, s Stats) []byte {
	b = append(b, `{"elapsed":`...)
	b = strconv.AppendFloat(b, s.Elapsed.Seconds(), 'f', -1, 64)
	b = append(b, `,"rows_read":`...)
	b = strconv.AppendUint(b, s.RowsRead, 10)
	b = append(b, `,"bytes_read":`...)
	b = strconv.AppendUint(b, s.BytesRead, 10)
	if s.WrittenRows != nil {
		b = append(b, `,"written_rows":`...)
		b = strconv.AppendUint(b, *s.WrittenRows, 10)
	}
	return append(b, '}')
}

// eachRowWriter writes JSONEachRow and JSONEachRowWithProgress: one JSON object per
// line; with progress, rows are wrapped as {"row": ...} between {"meta": ...} and
// {"progress": ...} records.
type eachRowWriter struct {
	w        *bufio.Writer
	progress bool
	cols     []Column
	buf      []byte
}

func (e *eachRowWriter) ContentType() string { return "application/x-ndjson; charset=UTF-8" }

func (e *eachRowWriter) Begin(cols []Column) error {
	e.cols = cols
	if !e.progress {
		return nil
	}
	b := appendMeta(append(e.buf[:0], `{"meta":[`...), cols)
	b = append(b, "]}\n"...)
	e.buf = b
	_, err := e.w.Write(b)
	return err
}

func (e *eachRowWriter) Row(values []any) error {
	b := e.buf[:0]
	if e.progress {
		b = append(b, `{"row":`...)
	}
	b = append(b, '{')
	for i, v := range values {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, e.cols[i].Name)
		b = append(b, ':')
		b = appendJSON(b, v, e.cols[i].Type)
	}
	b = append(b, '}')
	if e.progress {
		b = append(b, '}')
	}
	b = append(b, '\n')
	e.buf = b
	_, err := e.w.Write(b)
	return err
}

// RowObject implements ObjectWriter (not for JSONEachRowWithProgress).
func (e *eachRowWriter) RowObject(obj []byte) error {
	if _, err := e.w.Write(obj); err != nil {
		return err
	}
	return e.w.WriteByte('\n')
}

func (e *eachRowWriter) Progress(rows, bytes uint64, elapsed time.Duration) error {
	if !e.progress {
		return nil
	}
	b := append(e.buf[:0], `{"progress":{"read_rows":`...)
	b = strconv.AppendUint(b, rows, 10)
	b = append(b, `,"read_bytes":`...)
	b = strconv.AppendUint(b, bytes, 10)
	b = append(b, `,"elapsed_ns":`...)
	b = strconv.AppendInt(b, elapsed.Nanoseconds(), 10)
	b = append(b, "}}\n"...)
	e.buf = b
	_, err := e.w.Write(b)
	return err
}

func (e *eachRowWriter) End(s Stats) error {
	if !e.progress {
		return nil
	}
	if err := e.Progress(s.RowsRead, s.BytesRead, s.Elapsed); err != nil {
		return err
	}
	b := append(e.buf[:0], `{"statistics":`...)
	b = appendStats(b, s)
	b = append(b, "}\n"...)
	_, err := e.w.Write(b)
	return err
}

func (e *eachRowWriter) Fail(err error) error {
	b := append(e.buf[:0], `{"exception":`...)
	b = appendJSONString(b, err.Error())
	b = append(b, "}\n"...)
	_, werr := e.w.Write(b)
	return werr
}

// textWriter writes CSV and TSV, optionally with a header line of column names.
type textWriter struct {
	w     *bufio.Writer
	csv   bool
	names bool
	cols  []Column
	buf   []byte
	cell  []byte
}

func (t *textWriter) ContentType() string {
	if t.csv {
		return "text/csv; charset=UTF-8"
	}
	return "text/tab-separated-values; charset=UTF-8"
}

func (t *textWriter) sep() byte {
	if t.csv {
		return ','
	}
	return '\t'
}

func (t *textWriter) Begin(cols []Column) error {
	t.cols = cols
	if !t.names {
		return nil
	}
	b := t.buf[:0]
	for i, c := range cols {
		if i > 0 {
			b = append(b, t.sep())
		}
		b = t.appendCell(b, c.Name, true)
	}
	b = append(b, '\n')
	t.buf = b
	_, err := t.w.Write(b)
	return err
}

// appendCell appends one rendered cell: CSV quotes strings with double quotes, TSV
// escapes tabs, newlines and backslashes.
func (t *textWriter) appendCell(b []byte, s string, quote bool) []byte {
	if t.csv {
		if !quote {
			return append(b, s...)
		}
		b = append(b, '"')
		for i := 0; i < len(s); i++ {
			if s[i] == '"' {
				b = append(b, '"')
			}
			b = append(b, s[i])
		}
		return append(b, '"')
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\\':
			b = append(b, '\\', '\\')
		case 0:
			b = append(b, '\\', '0')
		default:
			b = append(b, c)
		}
	}
	return b
}

func (t *textWriter) Row(values []any) error {
	b := t.buf[:0]
	for i, v := range values {
		if i > 0 {
			b = append(b, t.sep())
		}
		u, typ := unwrap(v, t.cols[i].Type)
		if u == nil {
			b = append(b, `\N`...)
			continue
		}
		t.cell = appendText(t.cell[:0], u, typ, false)
		// In CSV everything that is not a plain number or boolean is quoted, as
		// ClickHouse does, so cells with commas, quotes or newlines stay one cell.
		b = t.appendCell(b, string(t.cell), !isNumberOrBool(u))
	}
	b = append(b, '\n')
	t.buf = b
	_, err := t.w.Write(b)
	return err
}

func isNumberOrBool(v any) bool {
	switch v.(type) {
	case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	}
	return false
}

func (t *textWriter) Progress(uint64, uint64, time.Duration) error { return nil }
func (t *textWriter) End(Stats) error                              { return nil }

// Fail appends ClickHouse's in-band error line; readers of CSV and TSV cannot tell it
// from data by format alone, so the response also ends without its last newline
// convention being met.
func (t *textWriter) Fail(err error) error {
	_, werr := t.w.WriteString("\n__exception__\n" + err.Error() + "\n")
	return werr
}

// appendMeta appends the columns as the elements of a JSON "meta" array.
func appendMeta(b []byte, cols []Column) []byte {
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, c.Name)
		b = append(b, `,"type":`...)
		b = appendJSONString(b, c.Type)
		b = append(b, '}')
	}
	return b
}
