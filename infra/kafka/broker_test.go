package kafka

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/svc-data/svc/infra/testenv"
)

// TestBrokerLifecycle starts a real broker from the fetched jars, round-trips a record,
// restarts the broker on the same directory and finds the record again.
func TestBrokerLifecycle(t *testing.T) {
	libs := testenv.KafkaLibs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	b := startBroker(ctx, t, libs, dir)
	cl, err := b.Conn().Client()
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "lifecycle"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "lifecycle", Value: []byte("kept")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(PIDFile(dir)); !os.IsNotExist(err) {
		t.Fatalf("pid file left after shutdown: %v", err)
	}

	b2 := startBroker(ctx, t, libs, dir)
	cl2, err := b2.Conn().Client(kgo.ConsumeTopics("lifecycle"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	fs := cl2.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) != 1 || string(recs[0].Value) != "kept" {
		t.Fatalf("after restart got %d records", len(recs))
	}
}
