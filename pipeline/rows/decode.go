package rows

import (
	"errors"
	"fmt"
	"sync"

	"github.com/svc-data/svc/pipeline/internal/jsontext"
)

var readers = sync.Pool{New: func() any { return new(jsontext.Reader) }}

// DecodeJSON appends the rows of a plain JSON body (POST /v1/tables/{table} without a
// transform): one JSON object is one row, an array of JSON objects is one row per element, in
// order. Each row is the object compacted, with its members, their order and their escapes
// as sent.
//
// The body must be exactly one JSON value in UTF-8, nested at most 1000 levels. On any error
// dst is left as it was; the message names the problem and its byte offset, or the array
// element that is not an object.
func DecodeJSON(body []byte, dst *Buffer) (err error) {
	mark := dst.Mark()
	// The rows take at most the body's bytes plus a newline (compacting only removes, and
	// each row's newline replaces an array's bracket or comma): room for them at once,
	// instead of growing by doubling, which copied each request's rows about twice.
	dst.Grow(len(body) + 1)
	r := readers.Get().(*jsontext.Reader)
	r.Reset(body)
	err = decodeJSON(r, dst)
	r.Reset(nil)
	readers.Put(r)
	if err != nil {
		dst.Restore(mark)
	}
	return err
}

// notObjectError stops an array walk at an element that is not an object.
type notObjectError struct {
	index int
	kind  jsontext.Kind
}

func (e *notObjectError) Error() string {
	return fmt.Sprintf("element %d of the array is %s, not an object", e.index, e.kind)
}

func decodeJSON(r *jsontext.Reader, dst *Buffer) error {
	switch k := r.Kind(); k {
	case jsontext.Object:
		if err := appendRow(r, dst); err != nil {
			return err
		}
	case jsontext.Array:
		err := r.Array(func(i int) error {
			if k := r.Kind(); k != jsontext.Object {
				// An invalid element is a syntax error, reported as such.
				if _, err := r.Raw(); err != nil {
					return err
				}
				return &notObjectError{index: i, kind: k}
			}
			return appendRow(r, dst)
		})
		if err != nil {
			return err
		}
	case jsontext.Invalid:
		if r.AtEnd() {
			return errors.New("the body is empty; send one JSON object or an array of JSON objects")
		}
		_, err := r.Raw()
		return err
	default:
		if _, err := r.Raw(); err != nil {
			return err
		}
		return fmt.Errorf("the body is %s; send one JSON object or an array of JSON objects", k)
	}
	if err := r.End(); err != nil {
		return fmt.Errorf("%w (send several objects as one JSON array)", err)
	}
	return nil
}

func appendRow(r *jsontext.Reader, dst *Buffer) (err error) {
	dst.B, err = r.AppendCompact(dst.B)
	if err != nil {
		return err
	}
	return dst.EndRow()
}
