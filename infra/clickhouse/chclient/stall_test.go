package chclient_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/svc-data/svc/infra/clickhouse"
	"github.com/svc-data/svc/infra/clickhouse/chtest"
	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/infra/kafka/kafkatest"
	"github.com/svc-data/svc/pipeline"
)

// TestAStalledPartitionDoesNotHoldBackTheOthers runs one group member on the real
// broker and engine with two partitions: partition 0 carries rows of a table whose
// generation does not exist yet (its inserts fail, the partition pauses), partition 1
// rows of a good table. Every good row lands while partition 0 is stalled, well past
// the point where its worker's queue is full; then the late table is created and its
// rows land, each exactly once. While stalled, partition 0 is reported as such.
//
// It runs twice: with the reader's default queue bound (16 MiB, which these few rows
// never reach: the stalled partition's fetches queue), and with a bound of one byte, so
// that every fetch queued behind the stalled delivery pauses the partition's fetching;
// franz-go then drops what it fetched and fetches it again on resume, which must
// neither lose nor repeat a row.
func TestAStalledPartitionDoesNotHoldBackTheOthers(t *testing.T) {
	conn := kafkatest.Conn(t)
	t.Run("queued", func(t *testing.T) { testStalledPartition(t, conn, 0) })
	t.Run("paused", func(t *testing.T) { testStalledPartition(t, conn, 1) })
}

func testStalledPartition(t *testing.T, conn kafka.Conn, queueBytes int) {
	proc := chtest.Start(t, clickhouse.ProcessConfig{})
	eng := chtest.Client(t, proc.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := pipeline.EnsureSchema(ctx, eng); err != nil {
		t.Fatal(err)
	}
	const table = "(doc JSON) ENGINE = MergeTree ORDER BY tuple() SETTINGS non_replicated_deduplication_window = 1000"
	for _, stmt := range []string{"CREATE DATABASE d", "CREATE TABLE d.good__g1 " + table} {
		if err := eng.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	run := uuid.NewString()
	topic, group := "test.stall."+run, "test.stall."+run
	if err := kafka.EnsureTopics(ctx, conn, 2, topic); err != nil {
		t.Fatal(err)
	}
	prod, err := conn.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ts := tables{eng: eng, good: uuid.New(), late: uuid.New(), impossible: uuid.New()}
	cons, err := pipeline.NewConsumer(pipeline.ConsumerConfig{MaxRows: 1000, Linger: 10 * time.Millisecond,
		RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, TokenKey: []byte("test-key-of-sixteen-bytes")}, eng, ts)
	if err != nil {
		t.Fatal(err)
	}
	gr, stop := runGroup(t, ctx, conn, group, topic, cons, func(c *kafka.GroupConfig) { c.MaxQueuedBytes = queueBytes })
	defer stop()
	produce := func(partition int32, table uuid.UUID, i int) {
		t.Helper()
		rec := &kgo.Record{Topic: topic, Partition: partition, Value: fmt.Appendf(nil, "{\"i\":%d}\n", i),
			Headers: []kgo.RecordHeader{{Key: pipeline.HeaderTable, Value: []byte(table.String())}, {Key: pipeline.HeaderDatabase, Value: []byte("d")}}}
		if err := prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	count := func(table string) int {
		n, err := eng.QueryStrings(context.Background(), "SELECT toString(count()) FROM d."+table)
		if err != nil {
			return -1
		}
		v, _ := strconv.Atoi(n[0])
		return v
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("timed out waiting for %s; pauses %d", what, cons.Stats().Pauses())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// The first late row stalls partition 0. Each later late row is fetched on its
	// own (the good row after it lands only once a fetch returned it), so the stalled
	// worker's queue of four fetches fills after a few rounds; a reader that delivers
	// partitions in one loop stops there, and the good rows stop landing.
	produce(0, ts.late, 0)
	waitFor("partition 0 to pause", func() bool { return cons.Stats().Pauses() > 0 })
	const rounds = 12
	for i := 1; i <= rounds; i++ {
		produce(0, ts.late, i)
		produce(1, ts.good, i)
		waitFor(fmt.Sprintf("good row %d while partition 0 is stalled", i), func() bool { return count("good__g1") == i })
	}
	// The stalled partition is reported with a reason that names the step, the table
	// and the engine's code, not the engine's text.
	waitFor("partition 0 reported stalled", func() bool { return len(cons.Stats().Stalls()) == 1 })
	st := cons.Stats().Stalls()[0]
	if want := "insert into table " + ts.late.String() + ": statement refused by the engine (engine error code 60)"; st.Partition != 0 || st.Reason != want || st.Attempts < 5 {
		t.Errorf("stall %+v, want partition 0 with reason %q", st, want)
	}
	if n := count("late__g1"); n != -1 {
		t.Fatalf("the late table exists with %d rows before the test made it", n)
	}
	if err := eng.Exec(ctx, "CREATE TABLE d.late__g1 "+table); err != nil {
		t.Fatal(err)
	}
	waitFor("the stalled partition's rows", func() bool { return count("late__g1") >= rounds+1 })
	waitFor("the stall to clear", func() bool { return len(cons.Stats().Stalls()) == 0 })
	if p := gr.FetchPauses(); (queueBytes == 1) != (p > 0) {
		t.Errorf("with a queue bound of %d bytes, fetching paused %d times", queueBytes, p)
	}
	// Both partitions keep flowing after the recovery, and nothing landed twice.
	produce(0, ts.late, rounds+1)
	produce(1, ts.good, rounds+1)
	waitFor("rows after the recovery", func() bool { return count("late__g1") >= rounds+2 && count("good__g1") >= rounds+1 })
	for name, want := range map[string]int{"late__g1": rounds + 2, "good__g1": rounds + 1} {
		got, err := eng.QueryStrings(ctx, "SELECT toString(count()) || '/' || toString(uniqExact(doc.i::Int64)) FROM d."+name)
		if err != nil {
			t.Fatal(err)
		}
		if w := fmt.Sprintf("%d/%d", want, want); got[0] != w {
			t.Errorf("%s: rows/distinct %s, want %s", name, got[0], w)
		}
	}
}
