// Package target is where the engine keeps a table's rows, as ingest and query both see
// it: the generation a batch is inserted into, and the cluster, organization and engine
// database the catalog puts a table in. It belongs to the engine data model: the
// pipeline's ports are written in these types and query/tables answers them, so neither
// imports the other.
package target

import "github.com/google/uuid"

// Table is where a batch of a table goes: one generation of it in the engine.
type Table struct {
	TableID  uuid.UUID
	Database string // engine database
	Table    string // engine table (a generation)
	Gen      int
	// ColumnType is the engine type of the generation's document column ("JSON", or an
	// app's typed paths such as the log-search layout's); an insert declares it so the
	// engine parses rows straight into it.
	ColumnType string
	// Remote is a table on object storage (a customer's bucket), which can fail on its
	// own: its inserts are bounded (the consumer's RemoteInsertTimeout).
	Remote bool
}

// Home is where the catalog puts a table or an engine database.
type Home struct {
	Cluster  uuid.UUID
	Org      uuid.UUID
	Database string // engine database
}
