// Package pipeline moves accepted rows from the edge through Kafka into the engine, exactly once.
package pipeline
