// Package metrics keeps the service's internal metrics of a cluster in the cluster's own
// engine (`_svc.metrics`): observations sampled by the node that runs the cluster, read
// back by GET /v1/metrics.
package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/svc-data/svc/query/sqlquote"
)

// Metric names the service records.
const (
	CPUAllocated     = "service.cluster.cpu.allocated"
	MemoryAllocated  = "service.cluster.memory.allocated"
	TableStorageSize = "service.table.storage.size"
	TableRows        = "service.table.rows"
	ConsumedMessages = "messaging.client.consumed.messages"
	ConsumerLag      = "kafka.consumer_group.lag"
	MaxCPUCores      = "max_cpu_cores"
	MaxMemoryBytes   = "max_memory_bytes"
	// The cluster's connector (its Kafka ingest consumer, GET /v1/connectors/{id}).
	ConnectorEvents       = "service.connector.events"       // rows landed since the consumer started (sum)
	ConnectorErrors       = "service.connector.errors"       // rows dead-lettered since it started (sum)
	ConnectorBuffer       = "service.connector.buffer"       // accepted requests fetched and held in open batches (gauge)
	ConnectorAvailability = "service.connector.availability" // 1 consuming with no stalled partition, else 0 (gauge)
	// Queries run through the query API in the sample's interval (not in Known: read by
	// the cluster metrics routes).
	ReadQueries  = "total_read_queries"
	WriteQueries = "total_write_queries"
)

// Kinds of series.
const (
	Gauge = "gauge"
	Delta = "delta" // the count in the interval since the previous observation
	Sum   = "sum"   // cumulative, monotonic
)

// Known lists the recorded metrics; Default is what a request without `metric` gets.
var (
	Known = []string{CPUAllocated, MemoryAllocated, TableStorageSize, TableRows, ConsumedMessages, ConsumerLag, MaxCPUCores, MaxMemoryBytes,
		ConnectorEvents, ConnectorErrors, ConnectorBuffer, ConnectorAvailability}
	Default = []string{MaxCPUCores, MaxMemoryBytes}
)

// IsKnown reports whether name may be requested: a recorded metric, or one of the
// service.connector.* family (those not in Known are not recorded: no points).
func IsKnown(name string) bool {
	for _, k := range Known {
		if k == name {
			return true
		}
	}
	return strings.HasPrefix(name, "service.connector.") && len(name) > len("service.connector.")
}

// Point is one observation.
type Point struct {
	Name     string            `json:"name"`
	Unit     string            `json:"unit"`
	Kind     string            `json:"kind"`
	Attrs    map[string]string `json:"attrs"`
	Time     time.Time         `json:"-"`
	Int      int64             `json:"as_int,string"`
	Double   float64           `json:"as_double"`
	IsDouble bool              `json:"-"`
}

// Engine is what the store needs of a cluster's engine.
type Engine interface {
	Exec(ctx context.Context, sql string) error
	QueryStrings(ctx context.Context, sql string) ([]string, error)
}

// Schema creates the metrics table.
func Schema(ctx context.Context, e Engine) error {
	if err := e.Exec(ctx, "CREATE DATABASE IF NOT EXISTS _svc"); err != nil {
		return err
	}
	return e.Exec(ctx, `CREATE TABLE IF NOT EXISTS _svc.metrics (
		time DateTime64(9, 'UTC'), name LowCardinality(String), unit LowCardinality(String),
		kind LowCardinality(String), attrs Map(String, String), as_int Int64, as_double Float64, is_double UInt8
	) ENGINE = MergeTree ORDER BY (name, time)
	TTL toDateTime(time) + INTERVAL 30 DAY`)
}

// Insert stores observations.
func Insert(ctx context.Context, e Engine, pts []Point) error {
	if len(pts) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO _svc.metrics (time, name, unit, kind, attrs, as_int, as_double, is_double) VALUES ")
	for i, p := range pts {
		if i > 0 {
			b.WriteString(", ")
		}
		keys := make([]string, 0, len(p.Attrs))
		for k := range p.Attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var m []string
		for _, k := range keys {
			m = append(m, sqlquote.String(k), sqlquote.String(p.Attrs[k]))
		}
		isD := 0
		if p.IsDouble {
			isD = 1
		}
		fmt.Fprintf(&b, "(fromUnixTimestamp64Nano(toInt64(%d), 'UTC'), %s, %s, %s, map(%s), %d, %s, %d)", p.Time.UnixNano(),
			sqlquote.String(p.Name), sqlquote.String(p.Unit), sqlquote.String(p.Kind), strings.Join(m, ", "), p.Int,
			strconv.FormatFloat(p.Double, 'g', -1, 64), isD)
	}
	return e.Exec(ctx, b.String())
}

// Query selects stored observations.
type Query struct {
	Names    []string
	Filters  map[string]string // exact attribute matches
	From, To time.Time         // from inclusive, to exclusive
	Baseline bool              // also the latest observation of each series before From
	Limit    int               // points at most; 0 means 10,000
}

// Read returns observations by name, series and time. Over Limit, it keeps every n-th
// observation (complete observations, never aggregates).
func Read(ctx context.Context, e Engine, q Query) ([]Point, error) {
	if len(q.Names) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10_000
	}
	var names []string
	for _, n := range q.Names {
		names = append(names, sqlquote.String(n))
	}
	where := []string{"name IN (" + strings.Join(names, ", ") + ")"}
	keys := make([]string, 0, len(q.Filters))
	for k := range q.Filters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		where = append(where, fmt.Sprintf("attrs[%s] = %s", sqlquote.String(k), sqlquote.String(q.Filters[k])))
	}
	cols := "formatRowNoNewline('JSONEachRow', name, unit, kind, attrs, toString(toUnixTimestamp64Nano(time)) AS t, toString(as_int) AS i, as_double, is_double)"
	rng := fmt.Sprintf("time >= fromUnixTimestamp64Nano(toInt64(%d), 'UTC') AND time < fromUnixTimestamp64Nano(toInt64(%d), 'UTC')", q.From.UnixNano(), q.To.UnixNano())
	n, err := e.QueryStrings(ctx, "SELECT toString(count()) FROM _svc.metrics WHERE "+strings.Join(append(where, rng), " AND "))
	if err != nil {
		return nil, err
	}
	total, _ := strconv.Atoi(first(n))
	every := 1
	if total > limit {
		every = (total + limit - 1) / limit
	}
	sqls := []string{fmt.Sprintf("SELECT %s FROM (SELECT *, row_number() OVER (PARTITION BY name, attrs ORDER BY time) AS rn FROM _svc.metrics WHERE %s) WHERE (rn - 1) %% %d = 0 ORDER BY name, time",
		cols, strings.Join(append(where, rng), " AND "), every)}
	if q.Baseline {
		sqls = append([]string{fmt.Sprintf("SELECT %s FROM _svc.metrics WHERE %s AND time < fromUnixTimestamp64Nano(toInt64(%d), 'UTC') ORDER BY time DESC LIMIT 1 BY name, attrs",
			cols, strings.Join(where, " AND "), q.From.UnixNano())}, sqls...)
	}
	var out []Point
	for _, sql := range sqls {
		rows, err := e.QueryStrings(ctx, sql)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			var v struct {
				Name, Unit, Kind string
				Attrs            map[string]string
				T, I             string
				AsDouble         float64 `json:"as_double"`
				IsDouble         int     `json:"is_double"`
			}
			if err := json.Unmarshal([]byte(r), &v); err != nil {
				return nil, fmt.Errorf("read metrics: %w", err)
			}
			ns, _ := strconv.ParseInt(v.T, 10, 64)
			i, _ := strconv.ParseInt(v.I, 10, 64)
			out = append(out, Point{Name: v.Name, Unit: v.Unit, Kind: v.Kind, Attrs: v.Attrs, Time: time.Unix(0, ns).UTC(),
				Int: i, Double: v.AsDouble, IsDouble: v.IsDouble == 1})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Time.Before(out[j].Time)
	})
	return out, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
