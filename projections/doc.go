// Package projections holds the control plane: events, aggregates, command handlers and read models.
package projections
