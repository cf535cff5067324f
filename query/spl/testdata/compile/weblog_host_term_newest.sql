-- host=web-03 checkout | head 100
-- result: events
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: (document fields)
-- stage: search | host=web-03 checkout
-- stage: head | 100

-- resolved before compiling the rest:
SELECT count(), min(t) FROM (SELECT doc._time AS t FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND (ifNull((lowerUTF8(nullIf(doc.`host`, '')) = 'web-03'), 0) AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'checkout'), 0)) AND doc._time >= toDateTime64('2024-01-01 23:37:30.000', 3, 'UTC') ORDER BY t DESC LIMIT 100)

-- main:
WITH
  s0 AS (SELECT doc, doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND (ifNull((lowerUTF8(nullIf(doc.`host`, '')) = 'web-03'), 0) AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'checkout'), 0))),
  s1 AS (SELECT * FROM s0 WHERE `@_time` >= toDateTime64('2024-01-01 23:59:30.000', 3, 'UTC') ORDER BY `@_time` DESC LIMIT 100)
SELECT `@_time` AS o1, nullIf(`@_raw`, '') AS o2, nullIf(`@host`, '') AS o3, nullIf(`@source`, '') AS o4, nullIf(`@sourcetype`, '') AS o5, nullIf(`@index`, '') AS o6, toJSONString(doc) AS o7 FROM s1 ORDER BY `@_time` DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND (ifNull((lowerUTF8(nullIf(doc.`host`, '')) = 'web-03'), 0) AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'checkout'), 0))),
  s1 AS (SELECT * FROM s0 WHERE `@_time` >= toDateTime64('2024-01-01 23:59:30.000', 3, 'UTC') ORDER BY `@_time` DESC LIMIT 100)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1

-- timeline:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND (ifNull((lowerUTF8(nullIf(doc.`host`, '')) = 'web-03'), 0) AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'checkout'), 0))),
  s1 AS (SELECT * FROM s0 WHERE `@_time` >= toDateTime64('2024-01-01 23:59:30.000', 3, 'UTC') ORDER BY `@_time` DESC LIMIT 100)
SELECT fromUnixTimestamp64Milli(toInt64((intDiv(toUnixTimestamp64Milli(`@_time`), 900000) - (toUnixTimestamp64Milli(`@_time`) % 900000 < 0)) * 900000), 'UTC') AS bucket, count() AS n FROM s1 WHERE `@_time` >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND `@_time` < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') GROUP BY bucket ORDER BY bucket WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(900000)
