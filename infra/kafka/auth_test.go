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

// TestBrokerServesOnlyItsCredentials: the embedded broker asks every client for the
// credentials it generated into its data directory (mode 0600). A local process without
// them (issue 23: any local user could read another organization's ingest topic from
// offset 0 and write records into it) is refused on fetch and on produce, and so is one
// with a wrong password; svcd's client, with them, reads and writes.
func TestBrokerServesOnlyItsCredentials(t *testing.T) {
	libs := testenv.KafkaLibs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	b := startBroker(ctx, t, libs, dir)
	if fi, err := os.Stat(b.CredentialsFile()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}

	svcd, err := b.Conn().Client()
	if err != nil {
		t.Fatal(err)
	}
	defer svcd.Close()
	const topic = "svc.victim.ingest"
	if _, err := kadm.NewClient(svcd).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	if err := svcd.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("victim's row")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	wrong := b.Conn()
	wrong.SASL.Password = "guessed"
	for name, conn := range map[string]Conn{"no credentials": {Seeds: []string{b.Seeds()}}, "a wrong password": wrong} {
		// A refused client fails its request (the broker closes the connection, or the
		// authentication fails); the deadline only bounds its retries.
		rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
		reader, err := conn.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		fs := reader.PollFetches(rctx)
		reader.Close()
		if n := len(fs.Records()); n > 0 {
			t.Errorf("a client with %s read %d records of the topic", name, n)
		}
		writer, err := conn.Client()
		if err != nil {
			t.Fatal(err)
		}
		err = writer.ProduceSync(rctx, &kgo.Record{Topic: topic, Value: []byte("forged by " + name)}).FirstErr()
		writer.Close()
		rcancel()
		if err == nil {
			t.Errorf("a client with %s wrote to the topic", name)
		}
	}

	// The topic holds svcd's record only.
	end, err := kadm.NewClient(svcd).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup(topic, 0); o.Offset != 1 {
		t.Fatalf("the topic ends at offset %d, want 1 (svcd's record only)", o.Offset)
	}
}
