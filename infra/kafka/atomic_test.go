package kafka

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/svc-data/svc/infra/testenv"
	"github.com/svc-data/svc/pipeline"
)

// collector is a Consumer that keeps the values delivered to it.
type collector struct {
	mu     sync.Mutex
	values []string
}

func (c *collector) Assigned(pipeline.Assignment) {}
func (c *collector) Revoked(string, int32)        {}
func (c *collector) Drain(context.Context) error  { return nil }
func (c *collector) DeliverTo(_ context.Context, _ pipeline.Assignment, recs []pipeline.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range recs {
		c.values = append(c.values, string(r.Value[:min(len(r.Value), 16)]))
	}
	return nil
}

func (c *collector) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.values...)
}

// TestAtomicWritesAreAllOrNothing writes the parts of large requests in transactions on
// the real broker: a committed one is read whole by the group reader; one whose last
// part the broker refuses (larger than the topic's max.message.bytes) is aborted, and
// although its first parts were written (a read-uncommitted reader sees them), the group
// reader never delivers them.
func TestAtomicWritesAreAllOrNothing(t *testing.T) {
	testenv.Broker(t)
	conn, _, err := EnvConn()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topic := "atomic-" + uuid.NewString()
	admCl, err := conn.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	maxMsg := "1048576"
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"max.message.bytes": &maxMsg}, topic); err != nil {
		t.Fatal(err)
	}
	defer adm.DeleteTopics(context.Background(), topic)

	p, err := NewProducer(ProducerConfig{Conn: conn})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Random bytes: the producer compresses, and a repeated byte would shrink under the
	// topic's limit.
	part := func(name string, size int) *pipeline.Record {
		pad := make([]byte, size)
		_, _ = rand.Read(pad)
		v := append([]byte(name+"|"), pad...)
		return &pipeline.Record{Topic: topic, Value: v, Headers: map[string]string{"part": name}}
	}
	if err := p.ProduceAtomic(ctx, part("ok-1", 100<<10), part("ok-2", 100<<10), part("ok-3", 100<<10)); err != nil {
		t.Fatalf("committed transaction: %v", err)
	}
	// The refused part goes to the other partition than the first two, so those are
	// written (in their own batch) before the transaction aborts.
	keyed := func(r *pipeline.Record, key string) *pipeline.Record { r.Key = []byte(key); return r }
	partitioner := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
	partitionOf := func(key string) int { return partitioner.Partition(&kgo.Record{Key: []byte(key)}, 2) }
	other := "k"
	for partitionOf(other) == partitionOf("a") {
		other += "k"
	}
	err = p.ProduceAtomic(ctx, keyed(part("bad-1", 100<<10), "a"), keyed(part("bad-2", 100<<10), "a"), keyed(part("bad-3", 2<<20), other))
	if err == nil {
		t.Fatal("a transaction with a part the broker refuses was acknowledged")
	}
	// The producer recovers: a later transaction commits.
	if err := p.ProduceAtomic(ctx, keyed(part("after", 10), "a"), keyed(part("after", 10), other)); err != nil {
		t.Fatalf("transaction after an abort: %v", err)
	}

	// A read-uncommitted reader sees the aborted parts: they did reach the log.
	raw, err := conn.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var uncommitted []string
	for strings.Count(strings.Join(uncommitted, ","), "after") < 2 {
		fs := raw.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read uncommitted: %v (saw %v)", err, uncommitted)
		}
		fs.EachRecord(func(r *kgo.Record) { uncommitted = append(uncommitted, string(r.Value[:5])) })
	}
	if !strings.Contains(strings.Join(uncommitted, ","), "bad-1") {
		t.Fatalf("the aborted parts never reached the log, so this test proves nothing: %v", uncommitted)
	}

	// The group reader delivers the committed transactions only.
	c := &collector{}
	g, err := NewGroupReader(GroupConfig{Conn: conn, Group: "atomic-" + uuid.NewString(), Topics: []string{topic}}, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.Shutdown(context.Background())
	for {
		got := c.seen()
		// Both partitions end with an "after" record: once both are delivered, anything
		// of the aborted transaction would have been too.
		if strings.Count(strings.Join(got, ","), "after") == 2 {
			want := "after,after,ok-1,ok-2,ok-3"
			var names []string
			for _, v := range got {
				names = append(names, strings.SplitN(v, "|", 2)[0])
			}
			slices.Sort(names)
			if strings.Join(names, ",") != want {
				t.Fatalf("delivered %v, want %s", names, want)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("group reader delivered %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
