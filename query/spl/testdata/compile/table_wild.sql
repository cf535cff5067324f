-- * | table _time, *
-- result: statistics
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: bytes
-- column: status
-- column: user.id
-- stage: search | *
-- stage: table | _time, *

-- resolved before compiling the rest:
WITH
  s0 AS (SELECT doc, doc._time AS `@_time` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC'))
SELECT DISTINCT arrayJoin(JSONAllPaths(doc)) AS path FROM s0 ORDER BY path LIMIT 10000

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`user.id` AS `@user.id` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT `@_time` AS c1, nullIf(`@_raw`, '') AS c2, nullIf(`@host`, '') AS c3, nullIf(`@source`, '') AS c4, nullIf(`@sourcetype`, '') AS c5, nullIf(`@index`, '') AS c6, `@bytes` AS c7, `@status` AS c8, `@user.id` AS c9, `@_time` AS c10 FROM s0)
SELECT c1 AS o1, c2 AS o2, c3 AS o3, c4 AS o4, c5 AS o5, c6 AS o6, toJSONString(c7) AS o7, toJSONString(c8) AS o8, toJSONString(c9) AS o9 FROM s1 ORDER BY c10 DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`user.id` AS `@user.id` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT `@_time` AS c1, nullIf(`@_raw`, '') AS c2, nullIf(`@host`, '') AS c3, nullIf(`@source`, '') AS c4, nullIf(`@sourcetype`, '') AS c5, nullIf(`@index`, '') AS c6, `@bytes` AS c7, `@status` AS c8, `@user.id` AS c9, `@_time` AS c10 FROM s0)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1
