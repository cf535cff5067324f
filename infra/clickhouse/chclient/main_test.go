package chclient_test

import (
	"testing"

	"go.uber.org/goleak"
)

// This package starts goroutines (processes' waiters, pollers, servers); every test
// must leave none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
