package chclient

import "context"

// JSONBlock is Client.jsonBlock: the rows as a block in the flattened serialization, and
// whether they may travel so.
func (c *Client) JSONBlock(ctx context.Context, columnType string, rows ...[]byte) ([]byte, bool) {
	block, _, ok := c.jsonBlock(ctx, columnType, rows)
	return block, ok
}

// IsEngineException is isEngineException.
var IsEngineException = isEngineException
