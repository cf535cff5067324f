package query

import (
	"reflect"
	"time"
)

// ReadAll drains rows, detaching every value, and reports the first error.
func ReadAll(rows Rows) ([][]any, error) {
	var out [][]any
	for rows.Next() {
		vals := rows.Values()
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = detach(v)
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// detach copies a value of Rows.Values out of the driver's buffers, which the next row
// reuses:
// pointers are followed, slices and maps copied, byte strings made strings.
func detach(v any) any {
	if v == nil {
		return nil
	}
	if t, ok := v.(time.Time); ok {
		return t
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return detach(rv.Elem().Interface())
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return string(rv.Bytes())
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = detach(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		out := make(map[string]any, rv.Len())
		for _, k := range rv.MapKeys() {
			out[k.String()] = detach(rv.MapIndex(k).Interface())
		}
		return out
	}
	return v
}
