-- * | dedup 2 host, status keepempty=true
-- result: events
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: (document fields)
-- stage: search | *
-- stage: dedup | 2 host, status keepempty=true

-- main:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM (SELECT * FROM s0 WHERE (nullIf(doc.`host`, '') IS NOT NULL) AND (doc.`status` IS NOT NULL) ORDER BY doc._time DESC LIMIT 2 BY nullIf(doc.`host`, ''), CAST(doc.`status` AS Nullable(String))) UNION ALL SELECT * FROM s0 WHERE NOT ((nullIf(doc.`host`, '') IS NOT NULL) AND (doc.`status` IS NOT NULL)))
SELECT doc._time AS o1, nullIf(doc.`_raw`, '') AS o2, nullIf(doc.`host`, '') AS o3, nullIf(doc.`source`, '') AS o4, nullIf(doc.`sourcetype`, '') AS o5, nullIf(doc.`index`, '') AS o6, toJSONString(doc) AS o7 FROM s1 ORDER BY doc._time DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM (SELECT * FROM s0 WHERE (nullIf(doc.`host`, '') IS NOT NULL) AND (doc.`status` IS NOT NULL) ORDER BY doc._time DESC LIMIT 2 BY nullIf(doc.`host`, ''), CAST(doc.`status` AS Nullable(String))) UNION ALL SELECT * FROM s0 WHERE NOT ((nullIf(doc.`host`, '') IS NOT NULL) AND (doc.`status` IS NOT NULL)))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1

-- timeline:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM (SELECT * FROM s0 WHERE (nullIf(doc.`host`, '') IS NOT NULL) AND (doc.`status` IS NOT NULL) ORDER BY doc._time DESC LIMIT 2 BY nullIf(doc.`host`, ''), CAST(doc.`status` AS Nullable(String))) UNION ALL SELECT * FROM s0 WHERE NOT ((nullIf(doc.`host`, '') IS NOT NULL) AND (doc.`status` IS NOT NULL)))
SELECT fromUnixTimestamp64Milli(toInt64((intDiv(toUnixTimestamp64Milli(doc._time), 900000) - (toUnixTimestamp64Milli(doc._time) % 900000 < 0)) * 900000), 'UTC') AS bucket, count() AS n FROM s1 WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') GROUP BY bucket ORDER BY bucket WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(900000)
