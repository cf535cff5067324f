package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/svc-data/svc/projections/catalog"
	"github.com/svc-data/svc/projections/clusters"
	"github.com/svc-data/svc/query/metrics"
)

// clusterUsage implements clusters.Usage: observations go to the cluster's own engine
// (query/metrics), every Config.MetricsInterval and before its engine stops.
type clusterUsage struct{ n *node }

// Flush stores the query counts not yet sampled (flushQueries).
func (u clusterUsage) Flush(ctx context.Context, id uuid.UUID) { u.n.flushQueries(ctx, id) }

var generationSuffix = regexp.MustCompile(`__g[0-9]+$`)

// Sample records one observation of each metric of a cluster running on this node.
func (u clusterUsage) Sample(ctx context.Context, c *catalog.Cluster, res clusters.Resources, landed int64) error {
	n, id := u.n, c.ID
	eng, err := n.engines.client(id)
	if err != nil {
		return nil // stopped meanwhile
	}
	now := time.Now().UTC()
	pts := []metrics.Point{
		{Name: metrics.CPUAllocated, Unit: "{cpu}", Kind: metrics.Gauge, Double: res.CPU, IsDouble: true},
		{Name: metrics.MemoryAllocated, Unit: "By", Kind: metrics.Gauge, Int: res.Memory},
		{Name: metrics.MaxCPUCores, Unit: "{cpu}", Kind: metrics.Gauge, Double: res.CPU, IsDouble: true},
	}
	if rows, err := eng.QueryStrings(ctx, "SELECT toString(value) FROM system.metrics WHERE metric = 'MemoryTracking'"); err == nil && len(rows) == 1 {
		if v, err := strconv.ParseInt(rows[0], 10, 64); err == nil {
			pts = append(pts, metrics.Point{Name: metrics.MaxMemoryBytes, Unit: "By", Kind: metrics.Gauge, Int: v})
		}
	}
	pts = append(pts, metrics.Point{Name: metrics.ConsumedMessages, Unit: "{message}", Kind: metrics.Sum, Int: landed})
	// The connector: the same consumer, as GET /v1/connectors/{id} shows it.
	if st, running := n.ops.Stats(id); running {
		rows, _, _, _, dead := st.Totals()
		up := int64(1)
		if len(st.Stalls()) > 0 {
			up = 0
		}
		pts = append(pts, metrics.Point{Name: metrics.ConnectorEvents, Unit: "{row}", Kind: metrics.Sum, Int: rows},
			metrics.Point{Name: metrics.ConnectorErrors, Unit: "{row}", Kind: metrics.Sum, Int: dead},
			metrics.Point{Name: metrics.ConnectorBuffer, Unit: "{request}", Kind: metrics.Gauge, Int: st.Held()},
			metrics.Point{Name: metrics.ConnectorAvailability, Unit: "1", Kind: metrics.Gauge, Int: up})
	}

	// Tables: the active parts of every generation of a catalog table, summed.
	byEngine := map[string]*catalog.Database{}
	for _, d := range n.model.Databases(id) {
		byEngine[d.Engine] = d
	}
	rows, err := eng.QueryStrings(ctx, "SELECT formatRowNoNewline('JSONEachRow', database, table, toString(sum(bytes_on_disk)) AS b, toString(sum(rows)) AS r) "+
		"FROM system.parts WHERE active GROUP BY database, table")
	if err != nil {
		return err
	}
	type key struct{ db, table string }
	size, count := map[key]int64{}, map[key]int64{}
	for _, r := range rows {
		var v struct{ Database, Table, B, R string }
		if json.Unmarshal([]byte(r), &v) != nil {
			continue
		}
		d := byEngine[v.Database]
		if d == nil {
			continue // the service's own tables
		}
		k := key{d.Name, generationSuffix.ReplaceAllString(v.Table, "")}
		if _, ok := n.model.Table(id, k.db, k.table); !ok {
			continue
		}
		b, _ := strconv.ParseInt(v.B, 10, 64)
		rr, _ := strconv.ParseInt(v.R, 10, 64)
		size[k] += b
		count[k] += rr
	}
	for k := range size {
		attrs := map[string]string{"database": k.db, "table": k.table}
		pts = append(pts, metrics.Point{Name: metrics.TableStorageSize, Unit: "By", Kind: metrics.Gauge, Attrs: attrs, Int: size[k]},
			metrics.Point{Name: metrics.TableRows, Unit: "{row}", Kind: metrics.Gauge, Attrs: attrs, Int: count[k]})
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if lag, err := n.ops.Lag(lctx, id); err == nil {
		for _, l := range lag {
			pts = append(pts, metrics.Point{Name: metrics.ConsumerLag, Unit: "{message}", Kind: metrics.Gauge,
				Attrs: map[string]string{"partition": strconv.Itoa(int(l.Partition))}, Int: l.Lag})
		}
	}
	return n.insertWithQueries(ctx, id, eng, now, pts)
}

// insertWithQueries stores pts with the query counts not yet stored; when the insert
// fails the counts go back, so no query goes uncounted.
func (n *node) insertWithQueries(ctx context.Context, id uuid.UUID, eng metrics.Engine, now time.Time, pts []metrics.Point) error {
	reads, writes := n.takeQueries(id)
	pts = append(pts, metrics.Point{Name: metrics.ReadQueries, Unit: "{query}", Kind: metrics.Delta, Int: reads},
		metrics.Point{Name: metrics.WriteQueries, Unit: "{query}", Kind: metrics.Delta, Int: writes})
	for i := range pts {
		pts[i].Time = now
	}
	if err := metrics.Insert(ctx, eng, pts); err != nil {
		n.mu.Lock()
		if q := n.queries[id]; q == nil {
			n.queries[id] = &[2]int64{reads, writes}
		} else {
			q[0] += reads
			q[1] += writes
		}
		n.mu.Unlock()
		return err
	}
	return nil
}

// flushQueries stores the query counts not yet sampled before a cluster's engine stops
// (stop, idle stop, resize, svcd shutdown), so they survive the restart; only a crash
// loses the counts of the last interval.
func (n *node) flushQueries(ctx context.Context, id uuid.UUID) {
	n.mu.Lock()
	q := n.queries[id]
	pending := q != nil && (q[0] != 0 || q[1] != 0)
	n.mu.Unlock()
	if !pending {
		return
	}
	eng, err := n.engines.client(id)
	if err == nil {
		err = n.insertWithQueries(ctx, id, eng, time.Now().UTC(), nil)
	}
	if err != nil {
		n.log.Warn("store query counts before the engine stops", "cluster", id, "err", err)
	}
}

// ReadMetrics implements edge.ClusterRunner: a cluster's stored observations. A cluster
// that does not run on this node answers errNoEngine.
func (n *node) ReadMetrics(ctx context.Context, id uuid.UUID, q metrics.Query) ([]metrics.Point, error) {
	eng, err := n.engines.client(id)
	if err != nil {
		return nil, err
	}
	return metrics.Read(ctx, eng, q)
}
