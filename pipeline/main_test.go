package pipeline

import (
	"testing"

	"go.uber.org/goleak"
)

// The consumer starts a goroutine per partition; every test must leave none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
