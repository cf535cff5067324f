package edge

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/pipeline"
	"github.com/svc-data/svc/workflows/alerts"
)

// Ops are the views operators and producers use to see ingestion at work.
type Ops interface {
	// Stats returns the ingest counters of a cluster's consumer on this node.
	Stats(cluster uuid.UUID) (*pipeline.Stats, bool)
	pipeline.LagReader
	pipeline.DeadLetterReader
}

type freshnessView struct {
	Table string `json:"table"`
	// Rows inserted and dead-lettered by this node's consumers since it started.
	RowsInserted int64      `json:"rows_inserted"`
	DeadLettered int64      `json:"dead_lettered"`
	LastInsertAt *time.Time `json:"last_insert_at"`
	// AckToQueryable is how long rows took from the log's acknowledgment (the 2xx) to
	// being queryable, over the recent batches, in milliseconds.
	AckToQueryable struct {
		LastMS *float64 `json:"last_ms"`
		P50MS  *float64 `json:"p50_ms"`
		P99MS  *float64 `json:"p99_ms"`
	} `json:"ack_to_queryable"`
	// ConsumerLag is how many accepted requests (log records) of the table's cluster wait
	// to be inserted, in total and per partition.
	ConsumerLag struct {
		Records int64 `json:"records"`
		// HeldRecords are those of Records this node fetched and holds in open batches.
		HeldRecords int64                   `json:"held_records"`
		Partitions  []pipeline.PartitionLag `json:"partitions"`
	} `json:"consumer_lag"`
	// StorageUnavailable is set while the table's storage (a customer's bucket) is failing:
	// its rows go to its dead letters until retry_at, when it is tried again.
	StorageUnavailable *pipeline.Parked `json:"storage_unavailable"`
}

func ms(d time.Duration) *float64 {
	v := float64(d.Microseconds()) / 1000
	return &v
}

func (s *Server) freshness(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actQuery) || p.CustomRole() {
		return forbidden("read ingestion statistics")
	}
	_, t, err := s.selectedTable(ctx, p)
	if err != nil {
		return err
	}
	v := freshnessView{Table: t.Name}
	v.ConsumerLag.Partitions = []pipeline.PartitionLag{}
	if st, ok := s.deps.Ops.Stats(p.ClusterID); ok {
		v.ConsumerLag.HeldRecords = st.Held()
		if pk, ok := st.Parked(t.ID); ok {
			pk.Since, pk.RetryAt = pk.Since.UTC(), pk.RetryAt.UTC()
			v.StorageUnavailable = &pk
		}
		if ts, p50, p99, ok := st.Freshness(t.ID); ok {
			v.RowsInserted, v.DeadLettered = ts.Rows, ts.DeadLettered
			if !ts.LastInsert.IsZero() {
				last := ts.LastInsert.UTC()
				v.LastInsertAt = &last
				v.AckToQueryable.LastMS, v.AckToQueryable.P50MS, v.AckToQueryable.P99MS = ms(ts.LastLag), ms(p50), ms(p99)
			}
		}
	}
	lctx, cancel := context.WithTimeout(s.work(), 5*time.Second)
	defer cancel()
	lag, err := s.deps.Ops.Lag(lctx, p.ClusterID)
	if err != nil {
		return &APIError{Status: 503, Code: "log_unavailable", Message: "consumer lag is unavailable", Internal: err, RetryAfter: 1}
	}
	for _, l := range lag {
		v.ConsumerLag.Records += l.Lag
	}
	v.ConsumerLag.Partitions = lag
	writeJSON(ctx, 200, v)
	return nil
}

func (s *Server) deadLetters(ctx *fasthttp.RequestCtx, p *Principal) error {
	if !p.can(actQuery) || p.CustomRole() {
		return forbidden("read dead letters")
	}
	_, t, err := s.selectedTable(ctx, p)
	if err != nil {
		return err
	}
	limit := 100
	if l := ctx.QueryArgs().Peek("limit"); l != nil {
		n, err := strconv.Atoi(string(l))
		if err != nil || n < 1 || n > 1000 {
			return &APIError{Status: 400, Code: "invalid_limit", Field: "limit", Message: "limit must be 1 to 1000"}
		}
		limit = n
	}
	page, err := s.deps.Ops.DeadLetters(s.work(), p.ClusterID, pipeline.DeadLetterQuery{TableID: t.ID,
		Cursor: string(ctx.QueryArgs().Peek("cursor")), Limit: limit})
	if errors.Is(err, pipeline.ErrBadCursor) {
		return &APIError{Status: 400, Code: "invalid_cursor", Field: "cursor", Message: err.Error()}
	}
	if err != nil {
		return &APIError{Status: 503, Code: "log_unavailable", Message: "dead letters are unavailable", Internal: err, RetryAfter: 1}
	}
	writeJSON(ctx, 200, page)
	return nil
}

// metricsAllowed guards /metrics, which lists every organization's cluster and table
// ids: with an operator token (Config.MetricsToken) when one is set, else only on a
// loopback listen address.
func (s *Server) metricsAllowed(ctx *fasthttp.RequestCtx) error {
	if s.cfg.MetricsToken != "" {
		got := bearer(ctx.Request.Header.Peek("Authorization"))
		if subtle.ConstantTimeCompare(got, []byte(s.cfg.MetricsToken)) != 1 {
			return apiErr(401, "unauthenticated", "/metrics needs the operator's metrics token", "send Authorization: Bearer <SVC_METRICS_TOKEN>")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(s.Addr())
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return apiErr(403, "metrics_disabled", "/metrics is served without a token only on a loopback listen address",
			"set SVC_METRICS_TOKEN and send it as a bearer token")
	}
	return nil
}

// metrics serves Prometheus text exposition. Labels carry ids, never names, so the
// endpoint shows no tenant's table names.
func (s *Server) metrics(ctx *fasthttp.RequestCtx) error {
	if err := s.metricsAllowed(ctx); err != nil {
		return err
	}
	var b strings.Builder
	header := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	clusters := s.deps.Catalog.AllClusters()
	var rows, dead, lagLines []string
	header("svc_ingest_rows_total", "counter", "Rows inserted into tables by this node.")
	for _, c := range clusters {
		st, ok := s.deps.Ops.Stats(c.ID)
		if !ok {
			continue
		}
		for _, id := range st.Tables() {
			ts, _, _, _ := st.Freshness(id)
			rows = append(rows, fmt.Sprintf("svc_ingest_rows_total{cluster=%q,table_id=%q} %d\n", c.ID, id, ts.Rows))
			dead = append(dead, fmt.Sprintf("svc_ingest_dead_letters_total{cluster=%q,table_id=%q} %d\n", c.ID, id, ts.DeadLettered))
			_, p50, p99, _ := st.Freshness(id)
			lagLines = append(lagLines,
				fmt.Sprintf("svc_ingest_ack_to_queryable_seconds{cluster=%q,table_id=%q,quantile=\"0.5\"} %g\n", c.ID, id, p50.Seconds()),
				fmt.Sprintf("svc_ingest_ack_to_queryable_seconds{cluster=%q,table_id=%q,quantile=\"0.99\"} %g\n", c.ID, id, p99.Seconds()))
		}
	}
	sort.Strings(rows)
	for _, r := range rows {
		b.WriteString(r)
	}
	header("svc_ingest_dead_letters_total", "counter", "Rows the engine rejected, kept in the dead-letter topic.")
	sort.Strings(dead)
	for _, r := range dead {
		b.WriteString(r)
	}
	header("svc_ingest_ack_to_queryable_seconds", "summary", "Time from the log's acknowledgment to queryable, recent batches.")
	for _, r := range lagLines {
		b.WriteString(r)
	}
	header("svc_ingest_retries_total", "counter", "Batch steps retried because the engine or log was unavailable.")
	perCluster := func(name string, f func(*pipeline.Stats) int64) {
		for _, c := range clusters {
			if st, ok := s.deps.Ops.Stats(c.ID); ok {
				fmt.Fprintf(&b, "%s{cluster=%q} %d\n", name, c.ID, f(st))
			}
		}
	}
	perCluster("svc_ingest_retries_total", func(st *pipeline.Stats) int64 { _, r, _, _, _ := st.Totals(); return r })
	header("svc_ingest_duplicate_requests_total", "counter", "Retried requests dropped by their idempotency key.")
	perCluster("svc_ingest_duplicate_requests_total", func(st *pipeline.Stats) int64 { _, _, d, _, _ := st.Totals(); return d })
	header("svc_consumer_lag_records", "gauge", "Accepted requests waiting to be inserted, per partition.")
	lctx, cancel := context.WithTimeout(s.work(), 3*time.Second)
	defer cancel()
	for _, c := range clusters {
		lag, err := s.deps.Ops.Lag(lctx, c.ID)
		if err != nil {
			continue
		}
		for _, l := range lag {
			fmt.Fprintf(&b, "svc_consumer_lag_records{cluster=%q,partition=\"%d\"} %d\n", c.ID, l.Partition, l.Lag)
		}
	}
	header("svc_consumer_held_records", "gauge", "Accepted requests fetched by this node and held in batches not yet closed.")
	perCluster("svc_consumer_held_records", func(st *pipeline.Stats) int64 { return st.Held() })
	header("svc_consumer_stalled_partitions", "gauge", "Partitions of this node whose batch failed 5 times in a row and is replayed until it lands.")
	perCluster("svc_consumer_stalled_partitions", func(st *pipeline.Stats) int64 { return int64(len(st.Stalls())) })
	header("svc_otlp_grpc_messages_received_total", "counter", "OTLP/gRPC messages read (and decompressed) by this node; a stream refused at its headers sends none.")
	fmt.Fprintf(&b, "svc_otlp_grpc_messages_received_total %d\n", s.grpcMessages.Load())
	header("svc_otlp_grpc_streams_open", "gauge", "OTLP/gRPC streams accepted at their headers and not yet ended.")
	fmt.Fprintf(&b, "svc_otlp_grpc_streams_open %d\n", s.grpcKeys.Open())
	if s.deps.Alerts != nil {
		ev := s.deps.Alerts.EvaluationStats()
		histogram := func(name string, h alerts.Histogram) {
			for i, ub := range alerts.LagBuckets {
				n := uint64(0)
				if h.Counts != nil {
					n = h.Counts[i]
				}
				fmt.Fprintf(&b, "%s_bucket{le=\"%g\"} %d\n", name, ub, n)
			}
			fmt.Fprintf(&b, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", name, h.Count, name, h.Sum, name, h.Count)
		}
		header("svc_alert_evaluation_lag_seconds", "histogram", "Alert evaluations run by this node: from the scheduled time to the evaluation done (transitions recorded, destinations answered).")
		histogram("svc_alert_evaluation_lag_seconds", ev.Lag)
		header("svc_alert_evaluation_duration_seconds", "histogram", "Alert evaluations run by this node: from the execution's start to the evaluation done.")
		histogram("svc_alert_evaluation_duration_seconds", ev.Duration)
		header("svc_alert_evaluation_failures_total", "counter", "Alert evaluations by this node whose query failed (the alert's error state).")
		fmt.Fprintf(&b, "svc_alert_evaluation_failures_total %d\n", ev.Failed)
	}
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.SetBodyString(b.String())
	return nil
}
