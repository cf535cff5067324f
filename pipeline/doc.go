// Package pipeline moves accepted rows from the edge through the log into the engine,
// exactly once: the edge's Ingestor writes one record per request and answers only after
// the log acknowledged it; the Consumer batches records per partition, commits a plan
// with the offset before inserting, and deduplicates replays by token.
package pipeline
