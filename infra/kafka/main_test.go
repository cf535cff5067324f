package kafka

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

// This package starts goroutines (processes' waiters, pollers, servers); every test
// must leave none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startBroker starts a broker of the test's own on dir from the jars (SVC_KAFKA_LIBS),
// stopped with the test.
func startBroker(ctx context.Context, t *testing.T, libs, dir string) *Broker {
	t.Helper()
	b, err := NewBroker(BrokerConfig{LibsDir: libs, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
	return b
}
