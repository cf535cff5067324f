package tables

// The log-search app's table: search reads it and the HTTP Event Collector writes it, in
// each database, created on first use.
const (
	// LogSearchTable is the table's name.
	LogSearchTable = "logsearch_events"
	// LogSearchSortingKey orders events by time, which every search ranges over.
	LogSearchSortingKey = "_time"
	// LogSearchColumnType types the fields every event has, so search filters and time
	// ranges use typed columns; every other field is a JSON path.
	LogSearchColumnType = "JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"
)
