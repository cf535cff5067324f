package edge

import (
	"testing"

	"go.uber.org/goleak"
)

// The server starts goroutines per listener and connection; every test must leave
// none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
