package main

import (
	"errors"
	"fmt"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/pipeline/rows"
)

// decodeRows adapts the plain JSON body decoder to the edge, capping the rows of one
// request at what one log record holds.
func decodeRows(dst, body []byte) ([]byte, int, error) {
	buf := rows.Buffer{B: dst, MaxBytes: pipeline.MaxRequestBytes}
	if err := rows.DecodeJSON(body, &buf); err != nil {
		if errors.Is(err, rows.ErrTooLarge) {
			return nil, 0, fmt.Errorf("%w: %v", pipeline.ErrTooLarge, err)
		}
		return nil, 0, err
	}
	return buf.B, buf.Rows, nil
}
