package main

import (
	"sync"

	"github.com/google/uuid"

	"github.com/svc-data/svc/infra/kafka"
	"github.com/svc-data/svc/pipeline"
)

// ops gives the edge the ingest statistics of this node's consumers and reads lag and
// dead letters from Kafka.
type ops struct {
	kafka.Observer
	mu        sync.Mutex
	consumers map[uuid.UUID]*pipeline.Consumer
}

func (o *ops) add(cluster uuid.UUID, c *pipeline.Consumer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.consumers == nil {
		o.consumers = map[uuid.UUID]*pipeline.Consumer{}
	}
	o.consumers[cluster] = c
}

// Stats implements edge.Ops.
func (o *ops) Stats(cluster uuid.UUID) (*pipeline.Stats, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c, ok := o.consumers[cluster]
	if !ok {
		return nil, false
	}
	return c.Stats(), true
}

func (o *ops) remove(cluster uuid.UUID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.consumers, cluster)
}
