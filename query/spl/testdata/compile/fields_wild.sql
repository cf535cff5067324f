-- * | fields host, status, user.*
-- result: events
-- column: _time
-- column: _raw
-- column: host
-- column: (document fields)
-- stage: search | *
-- stage: fields | host, status, user.*

-- main:
WITH
  s0 AS (SELECT doc, doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC'))
SELECT `@_time` AS o1, nullIf(`@_raw`, '') AS o2, nullIf(`@host`, '') AS o3, toJSONString(doc) AS o4 FROM s0 WHERE `@_time` >= toDateTime64('2024-01-01 23:59:30.000', 3, 'UTC') ORDER BY `@_time` DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC'))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0

-- timeline:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC'))
SELECT fromUnixTimestamp64Milli(toInt64((intDiv(toUnixTimestamp64Milli(`@_time`), 900000) - (toUnixTimestamp64Milli(`@_time`) % 900000 < 0)) * 900000), 'UTC') AS bucket, count() AS n FROM s0 WHERE `@_time` >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND `@_time` < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') GROUP BY bucket ORDER BY bucket WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(900000)
