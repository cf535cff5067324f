package tables

// The log-search app's table: search reads it and the HTTP Event Collector writes it, in
// each database, created on first use.
const (
	// LogSearchTable is the table's name.
	LogSearchTable = "logsearch_events"
	// LogSearchSortingKey orders events by the hour, then by host, then by time. Every
	// search ranges over time, which the hour leads with, so a window prunes as it did
	// under a key of _time alone (to the hour; _time then prunes within each host's run).
	// Within the hour one host's events lie together, as in VictoriaLogs' streams: a
	// search naming a host reads its granules only (`host=web-03 login | head 100` over a
	// day of 1M events, 12 hosts: 105 → 62 ms). The hour bounds how far apart a busy
	// host's events may be, whatever the number of hosts. Tables made with the earlier
	// key ("_time") keep it.
	LogSearchSortingKey = "toStartOfHour(_time), host, _time"
	// LogSearchColumnType types the fields every event has, so search filters and time
	// ranges use typed columns; every other field is a JSON path.
	LogSearchColumnType = "JSON(_time DateTime64(3, 'UTC'), _raw String, host String, source String, sourcetype String, index String)"
)
