// Package kafkatest gives tests the test harness's broker: its address and the
// credentials it asks for (`svcstack kafka start` writes both; `go tool task test`
// exports KAFKA_SEEDS and KAFKA_SASL_FILE).
package kafkatest

import (
	"testing"

	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/testenv"
)

// Conn returns the harness's broker, skipping the test without one (a quick local unit
// run) and failing it when the broker does not answer (testenv.Broker) or the
// credentials named cannot be read.
func Conn(t testing.TB) kafka.Conn {
	t.Helper()
	testenv.Broker(t)
	c, _, err := kafka.EnvConn()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
