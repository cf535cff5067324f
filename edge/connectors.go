package edge

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svc-data/svc/pipeline"
)

// connectorView is an ingestion connector: the cluster's Kafka consumer, identified by
// the cluster's id (one connector per cluster).
type connectorView struct {
	ID              string                  `json:"id"`
	Type            string                  `json:"type"`
	ClusterID       string                  `json:"cluster_id"`
	Topic           string                  `json:"topic"`
	DeadLetterTopic string                  `json:"dead_letter_topic"`
	ConsumerGroup   string                  `json:"consumer_group"`
	State           string                  `json:"state"`
	Lag             *int64                  `json:"lag"`
	Partitions      []pipeline.PartitionLag `json:"partitions"`
	RowsLanded      *int64                  `json:"rows_landed"`
	DeadLettered    *int64                  `json:"dead_lettered"`
	// Stalled lists this node's partitions whose batch keeps failing (pipeline.Stall).
	Stalled []pipeline.Stall `json:"stalled"`
}

// getConnector answers GET /v1/connectors/{connector_id}: state and lag of a cluster's
// ingest consumer. Members of the organization read it.
func (s *Server) getConnector(ctx *fasthttp.RequestCtx, p *Principal) error {
	c, err := s.clusterParam(ctx, p, "connector_id", "read connectors", false)
	if err != nil {
		return err
	}
	v := connectorView{ID: c.ID.String(), Type: "kafka", ClusterID: c.ID.String(), Topic: pipeline.IngestTopic(c.ID),
		DeadLetterTopic: pipeline.DeadTopic(c.ID), ConsumerGroup: pipeline.ConsumerGroup(c.ID), Partitions: []pipeline.PartitionLag{},
		Stalled: []pipeline.Stall{}}
	st, running := s.deps.Ops.Stats(c.ID)
	switch {
	case running:
		v.State = "running"
		rows, _, _, _, dead := st.Totals()
		v.RowsLanded, v.DeadLettered = &rows, &dead
		v.Stalled = st.Stalls()
	case c.Running():
		v.State = "starting" // the cluster runs, this node's consumer does not (yet)
	default:
		v.State = "stopped" // ingestion is still accepted into the topic; it lands on resume
	}
	lctx, cancel := context.WithTimeout(s.work(), 5*time.Second)
	defer cancel()
	if lag, err := s.deps.Ops.Lag(lctx, c.ID); err == nil {
		var total int64
		for _, l := range lag {
			total += l.Lag
		}
		v.Lag, v.Partitions = &total, lag
	}
	writeJSON(ctx, 200, v)
	return nil
}
