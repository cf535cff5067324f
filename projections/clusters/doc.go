// Package clusters is the cluster runtime's policy: the size catalog clusters are made
// of, the autoscale decision, the idle rule, when ingestion wakes an idle-stopped
// cluster, what a node's reconciler does next for a cluster, and the engine limits a
// size maps to. It decides; cmd/svcd's node carries the decisions out on the engine
// processes and consumers. It imports nothing of edge, pipeline or query.
package clusters
