-- * | table host, status, bytes
-- result: statistics
-- column: host
-- column: status
-- column: bytes
-- stage: search | *
-- stage: table | host, status, bytes

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`host` AS `@host`, doc.`status` AS `@status`, doc.`bytes` AS `@bytes` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT nullIf(`@host`, '') AS c1, `@status` AS c2, `@bytes` AS c3, `@_time` AS c4 FROM s0)
SELECT c1 AS o1, toJSONString(c2) AS o2, toJSONString(c3) AS o3 FROM s1 ORDER BY c4 DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`host` AS `@host`, doc.`status` AS `@status`, doc.`bytes` AS `@bytes` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT nullIf(`@host`, '') AS c1, `@status` AS c2, `@bytes` AS c3, `@_time` AS c4 FROM s0)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1
