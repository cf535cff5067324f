// Package kafkatest gives tests the test harness's broker: its address and the
// credentials it asks for (`svcstack kafka start` writes both; `go tool task test`
// exports KAFKA_SEEDS and KAFKA_SASL_FILE).
package kafkatest

import (
	"testing"

	"github.com/svc-data/svc/infra/kafka"
)

// Conn returns the harness's broker, skipping the test without one (a quick local unit
// run) and failing it when the credentials named cannot be read.
func Conn(t testing.TB) kafka.Conn {
	t.Helper()
	c, ok, err := kafka.EnvConn()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("KAFKA_SEEDS not set; run through `go tool task test`")
	}
	return c
}
