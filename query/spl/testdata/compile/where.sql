-- * | where status >= 500 AND like(host, "web%") OR isnull(bytes)
-- result: events
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: (document fields)
-- stage: search | *
-- stage: where | status >= 500 AND like(host, "web%") OR isnull(bytes)

-- main:
WITH
  s0 AS (SELECT doc, doc._time AS `@_time`, doc.`status` AS `@status`, doc.`host` AS `@host`, doc.`bytes` AS `@bytes`, doc.`_raw` AS `@_raw`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM s0 WHERE ((if(toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL AND 500.0 IS NOT NULL, toFloat64OrNull(CAST(`@status` AS Nullable(String))) >= 500.0, CAST(`@status` AS Nullable(String)) >= toString(500.0)) AND like(nullIf(`@host`, ''), 'web%')) OR (`@bytes` IS NULL)))
SELECT `@_time` AS o1, nullIf(`@_raw`, '') AS o2, nullIf(`@host`, '') AS o3, nullIf(`@source`, '') AS o4, nullIf(`@sourcetype`, '') AS o5, nullIf(`@index`, '') AS o6, toJSONString(doc) AS o7 FROM s1 ORDER BY `@_time` DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`status` AS `@status`, doc.`host` AS `@host`, doc.`bytes` AS `@bytes`, doc.`_raw` AS `@_raw`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM s0 WHERE ((if(toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL AND 500.0 IS NOT NULL, toFloat64OrNull(CAST(`@status` AS Nullable(String))) >= 500.0, CAST(`@status` AS Nullable(String)) >= toString(500.0)) AND like(nullIf(`@host`, ''), 'web%')) OR (`@bytes` IS NULL)))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1

-- timeline:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`status` AS `@status`, doc.`host` AS `@host`, doc.`bytes` AS `@bytes`, doc.`_raw` AS `@_raw`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM s0 WHERE ((if(toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL AND 500.0 IS NOT NULL, toFloat64OrNull(CAST(`@status` AS Nullable(String))) >= 500.0, CAST(`@status` AS Nullable(String)) >= toString(500.0)) AND like(nullIf(`@host`, ''), 'web%')) OR (`@bytes` IS NULL)))
SELECT fromUnixTimestamp64Milli(toInt64((intDiv(toUnixTimestamp64Milli(`@_time`), 900000) - (toUnixTimestamp64Milli(`@_time`) % 900000 < 0)) * 900000), 'UTC') AS bucket, count() AS n FROM s1 WHERE `@_time` >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND `@_time` < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') GROUP BY bucket ORDER BY bucket WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(900000)
