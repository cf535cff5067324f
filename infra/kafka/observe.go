package kafka

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/svc-data/svc/pipeline"
)

// Observer reads consumer lag and dead letters of clusters.
type Observer struct {
	Conn Conn
}

var (
	_ pipeline.LagReader        = Observer{}
	_ pipeline.DeadLetterReader = Observer{}
)

// Lag implements pipeline.LagReader.
func (o Observer) Lag(ctx context.Context, cluster uuid.UUID) ([]pipeline.PartitionLag, error) {
	cl, err := o.Conn.Client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := pipeline.IngestTopic(cluster)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	committed, err := adm.FetchOffsets(ctx, pipeline.ConsumerGroup(cluster))
	if err != nil {
		return nil, fmt.Errorf("committed offsets: %w", err)
	}
	var out []pipeline.PartitionLag
	ends.Each(func(e kadm.ListedOffset) {
		c := int64(0)
		if o, ok := committed.Lookup(topic, e.Partition); ok && o.At >= 0 {
			c = o.At
		} else if start, err := adm.ListStartOffsets(ctx, topic); err == nil {
			if s, ok := start.Lookup(topic, e.Partition); ok {
				c = s.Offset
			}
		}
		out = append(out, pipeline.PartitionLag{Partition: e.Partition, Committed: c, End: e.Offset, Lag: max(0, e.Offset-c)})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out, nil
}

// maxScan bounds the dead-letter records one page may read past while filtering.
const maxScan = 100_000

// DeadLetters implements pipeline.DeadLetterReader: it reads the dead-letter topic from
// the cursor (or the oldest retained record) to its current end, keeping the given
// table's records. The cursor lists the next offset per partition.
func (o Observer) DeadLetters(ctx context.Context, cluster uuid.UUID, q pipeline.DeadLetterQuery) (pipeline.DeadLetterPage, error) {
	page := pipeline.DeadLetterPage{DeadLetters: []pipeline.DeadLetter{}}
	topic := pipeline.DeadTopic(cluster)
	cl, err := o.Conn.Client()
	if err != nil {
		return page, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return page, err
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return page, err
	}
	from := map[int32]int64{}
	starts.Each(func(s kadm.ListedOffset) { from[s.Partition] = s.Offset })
	if q.Cursor != "" {
		cur, err := parseCursor(q.Cursor)
		if err != nil {
			return page, err
		}
		for p, off := range cur {
			if off > from[p] {
				from[p] = off
			}
		}
	}
	end := map[int32]int64{}
	remaining := 0
	ends.Each(func(e kadm.ListedOffset) {
		end[e.Partition] = e.Offset
		if e.Offset > from[e.Partition] {
			remaining++
		}
	})
	next := map[int32]int64{}
	for p, off := range from {
		next[p] = off
	}
	if remaining == 0 {
		return page, nil
	}
	offsets := map[string]map[int32]kgo.Offset{topic: {}}
	for p, off := range from {
		if off < end[p] {
			offsets[topic][p] = kgo.NewOffset().At(off)
		}
	}
	rd, err := o.Conn.Client(kgo.ConsumePartitions(offsets))
	if err != nil {
		return page, err
	}
	defer rd.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	scanned, full := 0, false
	for !full && scanned < maxScan {
		done := true
		for p, off := range next {
			if off < end[p] {
				done = false
			}
		}
		if done {
			break
		}
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			if full || r.Offset < next[r.Partition] || r.Offset >= end[r.Partition] {
				return
			}
			scanned++
			next[r.Partition] = r.Offset + 1
			h := map[string]string{}
			for _, kv := range r.Headers {
				h[kv.Key] = string(kv.Value)
			}
			if h[pipeline.HeaderTable] != q.TableID.String() {
				return
			}
			page.DeadLetters = append(page.DeadLetters, pipeline.DeadLetter{
				ID: fmt.Sprintf("%d/%d", r.Partition, r.Offset), TableID: h[pipeline.HeaderTable], Table: h[pipeline.HeaderName],
				Reason: h[pipeline.HeaderReason], Row: strings.TrimRight(string(r.Value), "\n"), Source: h["source"], Received: r.Timestamp})
			if len(page.DeadLetters) >= q.Limit {
				full = true
			}
		})
	}
	more := false
	for p, off := range next {
		if off < end[p] {
			more = true
		}
	}
	if more {
		c := formatCursor(next)
		page.NextCursor = &c
	}
	return page, nil
}

func formatCursor(next map[int32]int64) string {
	var parts []string
	for p, off := range next {
		parts = append(parts, fmt.Sprintf("%d:%d", p, off))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func parseCursor(s string) (map[int32]int64, error) {
	out := map[int32]int64{}
	for _, part := range strings.Split(s, ",") {
		ps, os, ok := strings.Cut(part, ":")
		p, err1 := strconv.ParseInt(ps, 10, 32)
		off, err2 := strconv.ParseInt(os, 10, 64)
		if !ok || err1 != nil || err2 != nil || off < 0 {
			return nil, fmt.Errorf("%w: cursor %q is not one this service returned", pipeline.ErrBadCursor, s)
		}
		out[int32(p)] = off
	}
	return out, nil
}
