// Package clusters is the cluster runtime: the size catalog clusters are made of, and
// the Runtime that runs this node's part of every cluster (reconcile with backoff, idle
// stop, wake on ingestion and on a query, autoscaling, usage sampling) with the rules it
// follows (PlanReconcile, Idle, WakesOnIngest, Decide). It reaches the machine through
// ports it owns (ports.go), which cmd/svcd implements over the engine processes, the
// ingest consumers and the metrics store. It imports nothing of edge, pipeline or query.
package clusters
