-- index=* (status=404 OR status>=500) user.id IN (1, "a b", x*) status!=302
-- result: events
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: (document fields)
-- stage: search | index=* (status=404 OR status>=500) user.id IN (1, "a b", x*) status!=302

-- main:
WITH
  s0 AS (SELECT doc, doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND (((ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) = 404.0 OR lowerUTF8(CAST(doc.`status` AS Nullable(String))) = '404'), 0) OR ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) >= 500.0), 0)) AND (ifNull((toFloat64OrNull(CAST(doc.`user.id` AS Nullable(String))) = 1.0 OR lowerUTF8(CAST(doc.`user.id` AS Nullable(String))) = '1'), 0) OR ifNull((lowerUTF8(CAST(doc.`user.id` AS Nullable(String))) = 'a b'), 0) OR ifNull(ilike(CAST(doc.`user.id` AS Nullable(String)), 'x%'), 0))) AND ifNull(((doc.`status` IS NOT NULL) AND NOT ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) = 302.0 OR lowerUTF8(CAST(doc.`status` AS Nullable(String))) = '302'), 0)), 0)))
SELECT `@_time` AS o1, nullIf(`@_raw`, '') AS o2, nullIf(`@host`, '') AS o3, nullIf(`@source`, '') AS o4, nullIf(`@sourcetype`, '') AS o5, nullIf(`@index`, '') AS o6, toJSONString(doc) AS o7 FROM s0 WHERE `@_time` >= toDateTime64('2024-01-01 23:59:30.000', 3, 'UTC') ORDER BY `@_time` DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND (((ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) = 404.0 OR lowerUTF8(CAST(doc.`status` AS Nullable(String))) = '404'), 0) OR ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) >= 500.0), 0)) AND (ifNull((toFloat64OrNull(CAST(doc.`user.id` AS Nullable(String))) = 1.0 OR lowerUTF8(CAST(doc.`user.id` AS Nullable(String))) = '1'), 0) OR ifNull((lowerUTF8(CAST(doc.`user.id` AS Nullable(String))) = 'a b'), 0) OR ifNull(ilike(CAST(doc.`user.id` AS Nullable(String)), 'x%'), 0))) AND ifNull(((doc.`status` IS NOT NULL) AND NOT ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) = 302.0 OR lowerUTF8(CAST(doc.`status` AS Nullable(String))) = '302'), 0)), 0)))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0

-- timeline:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND (((ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) = 404.0 OR lowerUTF8(CAST(doc.`status` AS Nullable(String))) = '404'), 0) OR ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) >= 500.0), 0)) AND (ifNull((toFloat64OrNull(CAST(doc.`user.id` AS Nullable(String))) = 1.0 OR lowerUTF8(CAST(doc.`user.id` AS Nullable(String))) = '1'), 0) OR ifNull((lowerUTF8(CAST(doc.`user.id` AS Nullable(String))) = 'a b'), 0) OR ifNull(ilike(CAST(doc.`user.id` AS Nullable(String)), 'x%'), 0))) AND ifNull(((doc.`status` IS NOT NULL) AND NOT ifNull((toFloat64OrNull(CAST(doc.`status` AS Nullable(String))) = 302.0 OR lowerUTF8(CAST(doc.`status` AS Nullable(String))) = '302'), 0)), 0)))
SELECT fromUnixTimestamp64Milli(toInt64((intDiv(toUnixTimestamp64Milli(`@_time`), 900000) - (toUnixTimestamp64Milli(`@_time`) % 900000 < 0)) * 900000), 'UTC') AS bucket, count() AS n FROM s0 WHERE `@_time` >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND `@_time` < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') GROUP BY bucket ORDER BY bucket WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(900000)
