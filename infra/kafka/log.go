package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/svc-data/svc/pipeline"
)

// ProducerConfig sizes the producer.
type ProducerConfig struct {
	Conn Conn
	// MaxBufferedBytes bounds records waiting for the broker; a full buffer makes
	// Produce wait until its context ends, then fail with pipeline.ErrOverloaded.
	MaxBufferedBytes int
	// DeliveryTimeout bounds how long a record may wait for the broker before failing.
	DeliveryTimeout time.Duration
	// Linger is how long a partition's first buffered record waits for others before a
	// produce request is cut (DefaultProducerLinger when zero, none when negative):
	// concurrent requests then share one produce request, and the broker's cost follows
	// requests, not bytes. It delays an acknowledgment by at most this much.
	Linger time.Duration
	Logger *slog.Logger
}

// DefaultProducerLinger is the producer's linger unless ProducerConfig.Linger is set.
const DefaultProducerLinger = 10 * time.Millisecond

// Producer implements pipeline.Producer with an idempotent franz-go producer that waits
// for acknowledgment from all in-sync replicas, and pipeline.AtomicProducer with a
// transactional client made on first use.
type Producer struct {
	cl   *kgo.Client
	opts []kgo.Opt

	txMu sync.Mutex // one transaction at a time on the transactional client
	tx   *kgo.Client
}

var _ pipeline.AtomicProducer = (*Producer)(nil)

// NewProducer connects a producer.
func NewProducer(cfg ProducerConfig) (*Producer, error) {
	if cfg.MaxBufferedBytes <= 0 {
		cfg.MaxBufferedBytes = 256 << 20
	}
	if cfg.DeliveryTimeout <= 0 {
		cfg.DeliveryTimeout = 15 * time.Second
	}
	switch {
	case cfg.Linger == 0:
		cfg.Linger = DefaultProducerLinger
	case cfg.Linger < 0:
		cfg.Linger = 0
	}
	opts, err := cfg.Conn.Opts(
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotence is on by default and needs all acks
		kgo.ProducerBatchMaxBytes(MaxMessageBytes-1<<20),
		kgo.MaxBufferedBytes(cfg.MaxBufferedBytes),
		kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout),
		kgo.WithCompressor(newLZ4Compressor()), // LZ4 frames without a content checksum (lz4.go)
		kgo.ProducerLinger(cfg.Linger),
	)
	if err != nil {
		return nil, fmt.Errorf("kafka producer: %w", err)
	}
	if cfg.Logger != nil {
		opts = append(opts, kgo.WithLogger(slogAdapter{cfg.Logger}))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka producer: %w", err)
	}
	return &Producer{cl: cl, opts: opts}, nil
}

// ProduceAtomic implements pipeline.AtomicProducer: the records are written in one Kafka
// transaction, committed only when every record was acknowledged and aborted otherwise.
// Consumers read committed records only (GroupReader), so they see all or none. Large
// requests are rare, so transactions take turns on one client.
func (p *Producer) ProduceAtomic(ctx context.Context, records ...*pipeline.Record) error {
	p.txMu.Lock()
	defer p.txMu.Unlock()
	if p.tx == nil {
		cl, err := kgo.NewClient(append(p.opts, kgo.TransactionalID("svc-edge-"+uuid.NewString()),
			kgo.TransactionTimeout(time.Minute))...)
		if err != nil {
			return fmt.Errorf("%w: transactional producer: %v", pipeline.ErrOverloaded, err)
		}
		p.tx = cl
	}
	if err := p.tx.BeginTransaction(); err != nil {
		return p.resetTx(err)
	}
	err := p.produceOn(ctx, p.tx, records)
	if err == nil {
		err = p.tx.Flush(ctx)
	}
	commit := kgo.TryCommit
	if err != nil {
		commit = kgo.TryAbort
	}
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err != nil {
		// Records still buffered or in flight must be dropped before an abort.
		_ = p.tx.AbortBufferedRecords(endCtx)
	}
	if endErr := p.tx.EndTransaction(endCtx, commit); endErr != nil {
		// The outcome is unknown or the client is unusable: start over with a new
		// transactional id, which fences the old one (its open transaction aborts).
		if err == nil {
			err = endErr
		}
		return p.resetTx(err)
	}
	if err != nil {
		return classifyProduceError(err)
	}
	return nil
}

func (p *Producer) resetTx(err error) error {
	if p.tx != nil {
		p.tx.Close()
		p.tx = nil
	}
	return classifyProduceError(err)
}

// Produce implements pipeline.Producer.
func (p *Producer) Produce(ctx context.Context, records ...*pipeline.Record) error {
	return p.produceOn(ctx, p.cl, records)
}

func (p *Producer) produceOn(ctx context.Context, cl *kgo.Client, records []*pipeline.Record) error {
	recs := make([]*kgo.Record, len(records))
	for i, r := range records {
		kr := &kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value}
		for k, v := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
		recs[i] = kr
	}
	// Wait for every acknowledgment or for ctx, whichever comes first. franz-go cannot
	// fail a record already in flight when the broker disappears (an idempotent
	// producer must learn its fate first), so ctx alone would not bound the wait. A
	// record given up on here may still be written later: the caller reports it as not
	// acknowledged, and a retry with the same idempotency key lands once.
	results := make(chan error, len(recs))
	for _, r := range recs {
		cl.Produce(context.WithoutCancel(ctx), r, func(_ *kgo.Record, err error) { results <- err })
	}
	for range recs {
		select {
		case err := <-results:
			if err != nil {
				return classifyProduceError(err)
			}
		case <-ctx.Done():
			return fmt.Errorf("%w: the log did not acknowledge in time (%v)", pipeline.ErrOverloaded, ctx.Err())
		}
	}
	return nil
}

func classifyProduceError(err error) error {
	var ke *kerr.Error
	switch {
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return fmt.Errorf("%w: %v", pipeline.ErrTooLarge, err)
	case errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, kgo.ErrMaxBuffered), errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %v", pipeline.ErrOverloaded, err)
	case errors.As(err, &ke) && ke.Retriable:
		return fmt.Errorf("%w: %v", pipeline.ErrOverloaded, err)
	}
	// Connection failures and anything else the broker did not accept: the record was
	// not acknowledged, so the client may safely retry.
	return fmt.Errorf("%w: %v", pipeline.ErrOverloaded, err)
}

// Close flushes nothing (Produce is synchronous) and closes the clients.
func (p *Producer) Close() {
	p.cl.Close()
	p.txMu.Lock()
	defer p.txMu.Unlock()
	if p.tx != nil {
		p.tx.Close()
	}
}

// EnsureTopics creates topics that do not exist yet, replicated as the brokers' defaults
// say.
func EnsureTopics(ctx context.Context, conn Conn, partitions int32, topics ...string) error {
	return EnsureTopicsWith(ctx, conn, TopicSpec{Partitions: partitions}, topics...)
}

// TopicSpec is how topics are created.
type TopicSpec struct {
	Partitions int32
	// Replication is the replication factor; 0 is the brokers' default.replication.factor.
	Replication int16
	// MinInSync is the topics' min.insync.replicas: with acks=all (the producer's), a
	// write is acknowledged once that many replicas have it. 0 is the brokers' default.
	MinInSync int
}

// EnsureTopicsWith creates topics that do not exist yet as spec says; existing topics
// are left as they are.
func EnsureTopicsWith(ctx context.Context, conn Conn, spec TopicSpec, topics ...string) error {
	cl, err := conn.Client()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	rf := spec.Replication
	if rf == 0 {
		rf = -1
	}
	var configs map[string]*string
	if spec.MinInSync > 0 {
		v := strconv.Itoa(spec.MinInSync)
		configs = map[string]*string{"min.insync.replicas": &v}
	}
	res, err := adm.CreateTopics(ctx, spec.Partitions, rf, configs, topics...)
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	for _, r := range res.Sorted() {
		if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

// GroupConfig configures a consumer group reader.
type GroupConfig struct {
	Conn   Conn
	Group  string
	Topics []string
	Logger *slog.Logger
	// MaxQueuedBytes is how many record bytes of a partition may wait behind its
	// delivery before fetching the partition pauses; 0 is 16 MiB (the consumer's
	// largest batch).
	MaxQueuedBytes int
	// SessionTimeout is how long the group waits for a member that stopped heartbeating
	// (a killed node) before handing its partitions to the others; 0 is the client's
	// default, 45 s.
	SessionTimeout time.Duration
}

// Consumer is what a GroupReader feeds: pipeline.Consumer implements it.
type Consumer interface {
	Assigned(a pipeline.Assignment)
	Revoked(topic string, partition int32)
	// DeliverTo hands records of a partition to the consumer of assignment a, blocking
	// while it is busy; records for an assignment that was revoked meanwhile are dropped.
	DeliverTo(ctx context.Context, a pipeline.Assignment, recs []pipeline.Record) error
	// Drain flushes what the consumer holds; commits still work while it runs.
	Drain(ctx context.Context) error
}

// GroupReader joins a consumer group and drives a Consumer: partitions assigned to this
// member are handed over with their committed offset and metadata, fetched records are
// delivered in order, and commits carry the consumer's metadata.
//
// Each partition is delivered by its own goroutine, so a partition whose consumer is
// stuck (its engine table failing, its batch waiting on backpressure) holds back only
// itself: once MaxQueuedBytes of it wait behind a delivery, fetching of that partition
// is paused (franz-go keeps its position: what was fetched but not returned is fetched
// again) and resumed when its queue is empty. A consumer that is merely busy (inserting
// a batch while the next arrives) stays under that bound, so fetching goes on.
type GroupReader struct {
	cfg   GroupConfig
	cons  Consumer
	cl    *kgo.Client
	adm   *kadm.Client
	log   *slog.Logger
	wg    sync.WaitGroup
	stop  context.CancelFunc
	mu    sync.Mutex
	parts map[partKey]*partQueue // partitions assigned to this member
	// fetchPauses counts the pauses of a partition's fetching behind its delivery.
	fetchPauses atomic.Int64
}

type partKey struct {
	topic     string
	partition int32
}

// partQueue holds a partition's fetched records waiting for delivery.
type partQueue struct {
	a       *assignment
	batches [][]pipeline.Record
	bytes   int  // value bytes in batches
	running bool // a goroutine is delivering batches
	paused  bool // fetching of the partition is paused
}

// defaultMaxQueuedBytes is GroupConfig.MaxQueuedBytes by default: the consumer's largest
// batch. A pause drops what franz-go fetched of the partition, which is fetched again on
// resume, so it must be rare: a bound of two fetches paused a merely busy partition on
// nearly every insert and halved ingest throughput (DESIGN.md, "Failures, by class").
const defaultMaxQueuedBytes = 16 << 20

// NewGroupReader connects a group member; Start begins consuming.
func NewGroupReader(cfg GroupConfig, cons Consumer) (*GroupReader, error) {
	if cfg.MaxQueuedBytes <= 0 {
		cfg.MaxQueuedBytes = defaultMaxQueuedBytes
	}
	g := &GroupReader{cfg: cfg, cons: cons, log: cfg.Logger, parts: map[partKey]*partQueue{}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	opts := []kgo.Opt{
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64 << 20),
		kgo.FetchMaxPartitionBytes(MaxMessageBytes),
		// A fetch waits for a MiB of records or FetchWait, whichever comes first: on a
		// busy topic, a fetch answered as soon as any record arrives means about one
		// fetch per produce request, which costs the broker much of its CPU (issue 26);
		// a batch's linger (200 ms by default) is longer than the wait.
		kgo.FetchMinBytes(1 << 20),
		kgo.FetchMaxWait(FetchWait),
		// Parts of a large request are one transaction: read them only once committed.
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.OnPartitionsAssigned(g.assigned),
		kgo.OnPartitionsRevoked(g.revoked),
		kgo.OnPartitionsLost(g.revoked),
		kgo.WithLogger(slogAdapter{g.log}),
	}
	if cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout))
	}
	cl, err := cfg.Conn.Client(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka consumer group %s: %w", cfg.Group, err)
	}
	g.cl, g.adm = cl, kadm.NewClient(cl)
	return g, nil
}

// FetchWait is the longest a fetch waits for records beyond the first before it
// returns what it has: the delay a record can take to reach its consumer on a quiet topic.
const FetchWait = 50 * time.Millisecond

// Start polls until Shutdown.
func (g *GroupReader) Start(ctx context.Context) error {
	ctx, g.stop = context.WithCancel(context.WithoutCancel(ctx))
	g.wg.Go(func() { g.poll(ctx) })
	return nil
}

func (g *GroupReader) poll(ctx context.Context) {
	for ctx.Err() == nil {
		fs := g.cl.PollFetches(ctx)
		if fs.IsClientClosed() {
			return
		}
		fs.EachError(func(t string, p int32, err error) {
			if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
				g.log.Warn("fetch error", "topic", t, "partition", p, "err", err)
			}
		})
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) == 0 {
				return
			}
			recs := make([]pipeline.Record, len(p.Records))
			for i, r := range p.Records {
				h := make(map[string]string, len(r.Headers))
				for _, kv := range r.Headers {
					h[kv.Key] = string(kv.Value)
				}
				recs[i] = pipeline.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key,
					Value: r.Value, Headers: h, Timestamp: r.Timestamp}
			}
			g.enqueue(ctx, partKey{p.Topic, p.Partition}, recs)
		})
	}
}

// enqueue queues records of a partition for its delivery goroutine, starting one if
// none runs, and pauses fetching the partition when its queue is full.
func (g *GroupReader) enqueue(ctx context.Context, k partKey, recs []pipeline.Record) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.parts[k]
	if q == nil {
		return // revoked meanwhile; the next owner reads these again
	}
	q.batches = append(q.batches, recs)
	for _, r := range recs {
		q.bytes += len(r.Value)
	}
	if !q.running {
		q.running = true
		g.wg.Go(func() { g.deliver(ctx, k, q) })
		return
	}
	if q.bytes >= g.cfg.MaxQueuedBytes && !q.paused {
		q.paused = true
		g.fetchPauses.Add(1)
		g.cl.PauseFetchPartitions(map[string][]int32{k.topic: {k.partition}})
	}
}

// deliver hands a partition's queued records to the consumer in order until the queue
// is empty, then resumes fetching the partition if it was paused.
func (g *GroupReader) deliver(ctx context.Context, k partKey, q *partQueue) {
	for {
		g.mu.Lock()
		if g.parts[k] != q || len(q.batches) == 0 || ctx.Err() != nil {
			q.running = false
			if q.paused && g.parts[k] == q {
				q.paused = false
				g.cl.ResumeFetchPartitions(map[string][]int32{k.topic: {k.partition}})
			}
			g.mu.Unlock()
			return
		}
		recs := q.batches[0]
		q.batches[0] = nil
		q.batches = q.batches[1:]
		for _, r := range recs {
			q.bytes -= len(r.Value)
		}
		g.mu.Unlock()
		if err := g.cons.DeliverTo(ctx, q.a, recs); err != nil && ctx.Err() == nil {
			g.log.Error("deliver records", "topic", k.topic, "partition", k.partition, "err", err)
		}
	}
}

// FetchPauses is how many times fetching of a partition paused behind its delivery.
func (g *GroupReader) FetchPauses() int64 { return g.fetchPauses.Load() }

// Shutdown stops fetching, lets the consumer flush and commit what it holds, then leaves
// the group and closes the client. Safe without Start and twice.
func (g *GroupReader) Shutdown(ctx context.Context) error {
	if g.stop != nil {
		g.stop()
	}
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	var err error
	if g.stop != nil {
		err = g.cons.Drain(ctx)
	}
	g.cl.Close()
	return err
}

func (g *GroupReader) assigned(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
	var committed kadm.OffsetResponses
	for attempt := 0; ; attempt++ {
		var err error
		committed, err = g.adm.FetchOffsets(ctx, g.cfg.Group)
		if err == nil {
			if err = committed.Error(); err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		g.log.Warn("fetch committed offsets", "attempt", attempt, "err", err)
		time.Sleep(200 * time.Millisecond)
	}
	for topic, ps := range parts {
		for _, p := range ps {
			off, meta := int64(-1), ""
			if o, ok := committed.Lookup(topic, p); ok && o.Err == nil {
				off, meta = o.At, o.Metadata
			}
			g.log.Info("partition assigned", "topic", topic, "partition", p, "committed", off, "plan", meta)
			a := &assignment{g: g, topic: topic, partition: p, offset: off, meta: meta}
			g.mu.Lock()
			g.parts[partKey{topic, p}] = &partQueue{a: a}
			g.mu.Unlock()
			// A pause left by an earlier assignment of the partition must not outlive it.
			cl.ResumeFetchPartitions(map[string][]int32{topic: {p}})
			g.cons.Assigned(a)
		}
	}
}

func (g *GroupReader) revoked(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	for topic, ps := range parts {
		for _, p := range ps {
			g.mu.Lock()
			if q := g.parts[partKey{topic, p}]; q != nil {
				delete(g.parts, partKey{topic, p})
				q.batches, q.bytes = nil, 0
				if q.paused {
					q.paused = false
					g.cl.ResumeFetchPartitions(map[string][]int32{topic: {p}})
				}
			}
			g.mu.Unlock()
			g.cons.Revoked(topic, p)
		}
	}
}

type assignment struct {
	g         *GroupReader
	topic     string
	partition int32
	offset    int64
	meta      string
}

func (a *assignment) Topic() string              { return a.topic }
func (a *assignment) Partition() int32           { return a.partition }
func (a *assignment) Committed() (int64, string) { return a.offset, a.meta }

func (a *assignment) Commit(ctx context.Context, offset int64, metadata string) error {
	ctx = kgo.PreCommitFnContext(ctx, func(req *kmsg.OffsetCommitRequest) error {
		for i := range req.Topics {
			for j := range req.Topics[i].Partitions {
				m := metadata
				req.Topics[i].Partitions[j].Metadata = &m
			}
		}
		return nil
	})
	var cerr error
	done := make(chan struct{})
	a.g.cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{a.topic: {a.partition: {Epoch: -1, Offset: offset}}},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			defer close(done)
			if err != nil {
				cerr = err
				return
			}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
						cerr = err
					}
				}
			}
		})
	<-done
	return cerr
}

// slogAdapter routes franz-go's logs to slog, at warn and above.
type slogAdapter struct{ l *slog.Logger }

func (s slogAdapter) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (s slogAdapter) Log(level kgo.LogLevel, msg string, kv ...any) {
	switch level {
	case kgo.LogLevelError:
		s.l.Error("kafka: "+msg, kv...)
	case kgo.LogLevelWarn:
		s.l.Warn("kafka: "+msg, kv...)
	default:
		s.l.Debug("kafka: "+msg, kv...)
	}
}

// ParseSeeds splits a comma-separated broker list.
func ParseSeeds(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// PlanInspector reads the batch plans committed in a cluster's consumer group.
type PlanInspector struct {
	Conn Conn
	// Group names the consumer group of a cluster.
	Group func(cluster uuid.UUID) string
}

// PendingGenerations implements tables.PlanInspector.
func (p PlanInspector) PendingGenerations(ctx context.Context, cluster uuid.UUID) (map[uuid.UUID][]int, error) {
	cl, err := p.Conn.Client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	offsets, err := kadm.NewClient(cl).FetchOffsets(ctx, p.Group(cluster))
	if err != nil {
		return nil, err
	}
	if err := offsets.Error(); err != nil {
		return nil, err
	}
	out := map[uuid.UUID][]int{}
	for _, o := range offsets.Sorted() {
		gens, err := pipeline.PlannedGenerations(o.Metadata)
		if err != nil {
			continue // not a plan this version wrote; it names no generation
		}
		for id, g := range gens {
			out[id] = append(out[id], g)
		}
	}
	return out, nil
}
