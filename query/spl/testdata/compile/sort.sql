-- * | sort 100 -bytes, +host, num(status), str(user)
-- result: events
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: (document fields)
-- stage: search | *
-- stage: sort | 100 -bytes, +host, num(status), str(user)

-- main:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM s0 ORDER BY (doc.`bytes` IS NULL) ASC, (toFloat64OrNull(CAST(doc.`bytes` AS Nullable(String))) IS NULL) DESC, toFloat64OrNull(CAST(doc.`bytes` AS Nullable(String))) DESC, CAST(doc.`bytes` AS Nullable(String)) DESC, (nullIf(doc.`host`, '') IS NULL) ASC, (toFloat64OrNull(nullIf(doc.`host`, '')) IS NULL) ASC, toFloat64OrNull(nullIf(doc.`host`, '')) ASC, nullIf(doc.`host`, '') ASC, (toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) IS NULL) ASC, toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) ASC, (CAST(doc.`user` AS Nullable(String)) IS NULL) ASC, CAST(doc.`user` AS Nullable(String)) ASC, doc._time DESC LIMIT 100)
SELECT doc._time AS o1, nullIf(doc.`_raw`, '') AS o2, nullIf(doc.`host`, '') AS o3, nullIf(doc.`source`, '') AS o4, nullIf(doc.`sourcetype`, '') AS o5, nullIf(doc.`index`, '') AS o6, toJSONString(doc) AS o7 FROM s1 ORDER BY (doc.`bytes` IS NULL) ASC, (toFloat64OrNull(CAST(doc.`bytes` AS Nullable(String))) IS NULL) DESC, toFloat64OrNull(CAST(doc.`bytes` AS Nullable(String))) DESC, CAST(doc.`bytes` AS Nullable(String)) DESC, (nullIf(doc.`host`, '') IS NULL) ASC, (toFloat64OrNull(nullIf(doc.`host`, '')) IS NULL) ASC, toFloat64OrNull(nullIf(doc.`host`, '')) ASC, nullIf(doc.`host`, '') ASC, (toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) IS NULL) ASC, toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) ASC, (CAST(doc.`user` AS Nullable(String)) IS NULL) ASC, CAST(doc.`user` AS Nullable(String)) ASC, doc._time DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM s0 ORDER BY (doc.`bytes` IS NULL) ASC, (toFloat64OrNull(CAST(doc.`bytes` AS Nullable(String))) IS NULL) DESC, toFloat64OrNull(CAST(doc.`bytes` AS Nullable(String))) DESC, CAST(doc.`bytes` AS Nullable(String)) DESC, (nullIf(doc.`host`, '') IS NULL) ASC, (toFloat64OrNull(nullIf(doc.`host`, '')) IS NULL) ASC, toFloat64OrNull(nullIf(doc.`host`, '')) ASC, nullIf(doc.`host`, '') ASC, (toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) IS NULL) ASC, toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) ASC, (CAST(doc.`user` AS Nullable(String)) IS NULL) ASC, CAST(doc.`user` AS Nullable(String)) ASC, doc._time DESC LIMIT 100)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1

-- timeline:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM s0 ORDER BY (doc.`bytes` IS NULL) ASC, (toFloat64OrNull(CAST(doc.`bytes` AS Nullable(String))) IS NULL) DESC, toFloat64OrNull(CAST(doc.`bytes` AS Nullable(String))) DESC, CAST(doc.`bytes` AS Nullable(String)) DESC, (nullIf(doc.`host`, '') IS NULL) ASC, (toFloat64OrNull(nullIf(doc.`host`, '')) IS NULL) ASC, toFloat64OrNull(nullIf(doc.`host`, '')) ASC, nullIf(doc.`host`, '') ASC, (toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) IS NULL) ASC, toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) ASC, (CAST(doc.`user` AS Nullable(String)) IS NULL) ASC, CAST(doc.`user` AS Nullable(String)) ASC, doc._time DESC LIMIT 100)
SELECT fromUnixTimestamp64Milli(toInt64((intDiv(toUnixTimestamp64Milli(doc._time), 900000) - (toUnixTimestamp64Milli(doc._time) % 900000 < 0)) * 900000), 'UTC') AS bucket, count() AS n FROM s1 WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') GROUP BY bucket ORDER BY bucket WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(900000)
