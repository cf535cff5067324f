// Package promstore is the Prometheus app's storage layout in the engine, shared by
// remote write (which fills it) and the PromQL Queryable (which reads it).
//
// The layout is ClickHouse's TimeSeries engine's: a data table of (id, timestamp, value),
// a tags table with the metric name and labels keyed by series id, and a metrics-metadata
// table, so a ClickHouse server could attach a TimeSeries table to them
// (CREATE TABLE ... ENGINE = TimeSeries DATA db.prometheus_data TAGS db.prometheus_tags
// METRICS db.prometheus_metrics, with the id column's DEFAULT set to IDExpression). The
// data table has one column more, metric_hash (DEFAULT 0), leading its sorting key.
// Native histograms and exemplars, which the TimeSeries engine does not hold, have tables
// of their own keyed by the same series id.
//
// Every table lives in the database's engine database, so one organization's series are
// never in another's tables. Every table keeps a deduplication window: remote-write
// batches are inserted with deduplication tokens, exactly once.
package promstore

import (
	"crypto/md5"
	"fmt"
	"slices"
	"strings"

	"github.com/go-faster/city"
	"github.com/google/uuid"

	"github.com/svc-data/svc/query/sqlquote"
)

// Table names inside a database's engine database.
const (
	DataTable       = "prometheus_data"
	TagsTable       = "prometheus_tags"
	MetricsTable    = "prometheus_metrics"
	HistogramsTable = "prometheus_histograms"
	ExemplarsTable  = "prometheus_exemplars"
)

// MetricNameLabel is the label holding a series' metric name. The tags table keeps it in
// metric_name and every other label in tags.
const MetricNameLabel = "__name__"

const settings = "SETTINGS non_replicated_deduplication_window = 10000"

// The data table's first sorting column is a hash of each sample's metric name
// (MetricHash), so that one metric's series lie together: series ids are hashes of all
// the labels, and in (id, timestamp) order the series a query selects lie apart, each
// costing at least a granule in every part holding some of its samples (on 1,000 series
// x 12 h, reading one metric's 96 series touched 270 of 471 granules). The consumer
// writes the column; a row inserted without it (SQL) has 0, which readers read beside
// the hashes they select. Tables made before it (sorting key (id, timestamp), no such
// column) are read and written as they were.
const (
	MetricHashColumn = "metric_hash"
	DataSortingKey   = MetricHashColumn + ", id, timestamp" // as system.tables prints it
)

// MetricHash is the data table's metric_hash of metric name: the engine's
// cityHash64(name) (CityHash64 1.0.2, as ClickHouse computes it), so that a statement can
// compute it from the tags table's metric_name.
func MetricHash(name []byte) uint64 { return city.CH64(name) }

// DataGranularity is the rows per granule (the unit the engine reads) of the data table,
// a quarter of the engine's default 8,192: within one metric the series a query selects
// (one job's, say) may still lie apart, and a run of n rows of one series in a part costs
// about n + granularity rows read: for 12 h at 15 s (2,880 samples), about 11,000 rows in
// the default granules, about 4,900 in these. Measured on 1,000 series x 12 h in one part
// (before metric_hash): reading 96 of them took 39 ms of engine CPU instead of 67, reading
// 904 no different. The index holds four times the marks. A table made earlier keeps the
// granularity it was made with.
const DataGranularity = 2048

// TimedTables are the tables whose rows have a sample time (timestamp), which the app's
// retention deletes by (TTL).
var TimedTables = []string{DataTable, HistogramsTable, ExemplarsTable}

// RetainedTables are the tables the app's retention applies to: the timed tables, by
// each row's sample time, and the series table, by the last time a series was written
// (max_time), so that a series' labels go when its last samples do and stay as long as
// any sample refers to them. The metadata table (one row per metric family, no time, as
// many rows as metric names) keeps its rows.
var RetainedTables = []string{DataTable, TagsTable, HistogramsTable, ExemplarsTable}

// TTL is the TTL expression of the timed tables for a retention of seconds, written as
// the engine prints it back (engine_full).
func TTL(seconds int64) string { return TableTTL(DataTable, seconds) }

// TableTTL is the TTL expression of one of RetainedTables for a retention of seconds, as
// the engine prints it back; "" for a table the retention does not apply to.
func TableTTL(table string, seconds int64) string {
	switch {
	case table == TagsTable:
		return fmt.Sprintf("max_time + toIntervalSecond(%d)", seconds)
	case slices.Contains(TimedTables, table):
		return fmt.Sprintf("timestamp + toIntervalSecond(%d)", seconds)
	}
	return ""
}

// DDL returns the statements that create the app's tables in engine database db, in
// order, each idempotent.
func DDL(db string) []string { return DDLKeeping(db, 0) }

// DDLKeeping is DDL with the timed tables keeping samples for retention seconds (TTL),
// forever for 0.
func DDLKeeping(db string, retention int64) []string {
	q := func(t string) string { return sqlquote.Ident(db) + "." + sqlquote.Ident(t) }
	ttl, tagsTTL := settings, settings
	if retention > 0 {
		ttl = "TTL " + TTL(retention) + " " + settings
		tagsTTL = "TTL " + TableTTL(TagsTable, retention) + " " + settings
	}
	return []string{
		// Samples: one row per float sample, a metric's series together (DataSortingKey),
		// in granules of DataGranularity rows.
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	id UUID,
	timestamp DateTime64(3, 'UTC'),
	value Float64,
	%s UInt64 DEFAULT 0
) ENGINE = MergeTree ORDER BY (%s) %s, index_granularity = %d`, q(DataTable), MetricHashColumn, DataSortingKey, ttl, DataGranularity),
		// Series: one row per series and insert; the engine folds them into the first
		// and last time the series was written.
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	id UUID,
	metric_name LowCardinality(String),
	tags Map(LowCardinality(String), String),
	min_time SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
	max_time SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = AggregatingMergeTree PRIMARY KEY metric_name ORDER BY (metric_name, id) %s`, q(TagsTable), tagsTTL),
		// Metric families' metadata, the last written winning.
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	metric_family_name String,
	type String,
	unit String,
	help String
) ENGINE = ReplacingMergeTree ORDER BY metric_family_name %s`, q(MetricsTable), settings),
		// Native histogram samples, bucket counts absolute (not deltas), float or integer
		// histograms alike; custom_values holds the bounds of custom-bucket (NHCB) schemas.
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	id UUID,
	timestamp DateTime64(3, 'UTC'),
	counter_reset_hint UInt8,
	schema Int32,
	zero_threshold Float64,
	zero_count Float64,
	count Float64,
	sum Float64,
	positive_spans Array(Tuple(offset Int32, length UInt32)),
	positive_buckets Array(Float64),
	negative_spans Array(Tuple(offset Int32, length UInt32)),
	negative_buckets Array(Float64),
	custom_values Array(Float64)
) ENGINE = MergeTree ORDER BY (id, timestamp) %s`, q(HistogramsTable), ttl),
		// Exemplars of a series.
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	id UUID,
	timestamp DateTime64(3, 'UTC'),
	value Float64,
	labels Map(String, String)
) ENGINE = MergeTree ORDER BY (id, timestamp) %s`, q(ExemplarsTable), ttl),
	}
}

// A Label is one name=value pair of a series.
type Label struct{ Name, Value string }

// SeriesID is the id of the series with labels (the metric name included as __name__):
// the MD5 of the labels sorted by name, each written as name 0xff value 0xff, its 16
// bytes read as a UUID in order (as UUIDNumToString reads them). IDExpression computes the same in the engine. The order of labels does not
// matter; labels is sorted in place.
func SeriesID(labels []Label) uuid.UUID {
	// A series' label names are unique, so any sort gives the same order; this one and
	// the stack buffer do not allocate.
	slices.SortFunc(labels, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	var stack [512]byte
	b := stack[:0]
	for _, l := range labels {
		b = append(b, l.Name...)
		b = append(b, 0xff)
		b = append(b, l.Value...)
		b = append(b, 0xff)
	}
	return uuid.UUID(md5.Sum(b))
}

// IDExpression is SeriesID in the engine's SQL, over the tags table's metric_name and
// tags columns: the DEFAULT of a TimeSeries table's id column attached to these tables.
const IDExpression = `toUUID(UUIDNumToString(MD5(arrayStringConcat(arrayMap(p -> concat(p.1, '\xff', p.2, '\xff'), ` +
	`arraySort(arrayConcat([('__name__', metric_name)], arrayZip(mapKeys(tags), mapValues(tags))))), ''))))`
