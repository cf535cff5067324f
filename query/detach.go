package query

import (
	"reflect"
	"time"
)

// Detach copies a value of Rows.Values out of the driver's buffers, which the next row
// reuses:
// pointers are followed, slices and maps copied, byte strings made strings.
func Detach(v any) any {
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
		return Detach(rv.Elem().Interface())
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return string(rv.Bytes())
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = Detach(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		out := make(map[string]any, rv.Len())
		for _, k := range rv.MapKeys() {
			out[k.String()] = Detach(rv.MapIndex(k).Interface())
		}
		return out
	}
	return v
}
